#!/bin/bash
# Moves a 200 MB file to and from a release `cairn serve` over loopback with curl and with `cairn files` (the SDK in a
# process of its own), three rounds, and reports MB/s, the client's peak memory and the server's.
# Build first: swift build -c release --product cairn. Needs curl and GNU time (/usr/bin/time).
set -e
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/scripts/lib/stop_process.sh"
C=${CAIRN:-$root/.build/release/cairn}
D=$(mktemp -d); export CAIRN_PASSWORD=measure-password-123
SERVER=""
trap 'stop_process "$SERVER"; rm -rf "$D"' EXIT
on_signals_exit
$C admin --data $D/data add-project field >/dev/null
$C admin --data $D/data add-user ada --password $CAIRN_PASSWORD >/dev/null
$C admin --data $D/data grant ada --project field --role admin >/dev/null
$C admin --data $D/data set-schema --project field $root/scripts/contract/schema.json >/dev/null
$C serve --data $D/data --port 0 > $D/serve.log 2>&1 &
SERVER=$!
for _ in $(seq 1 100); do
  PORT="$(grep -oE 'listening on http://127\.0\.0\.1:[0-9]+' $D/serve.log | grep -oE '[0-9]+$' | head -1 || true)"
  [ -n "$PORT" ] && break
  sleep 0.1
done
B=http://127.0.0.1:$PORT
head -c $((200*1024*1024)) /dev/urandom > $D/big.bin
SHA=$(sha256sum $D/big.bin | cut -d' ' -f1)
TOKEN=$(curl -s -X POST $B/v1/auth/login -H 'Content-Type: application/json' -d "{\"username\":\"ada\",\"password\":\"$CAIRN_PASSWORD\"}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["accessToken"])')
hwm() { grep VmHWM /proc/$1/status | awk '{print $2}'; }
rss() { grep VmRSS /proc/$1/status | awk '{print $2}'; }
now() { date +%s.%N; }
mbps() { python3 -c "print(round(200*1.048576/($2-$1),1))"; }
echo "server RSS before any transfer: $(( $(rss $SERVER) / 1024 )) MB"
for round in 1 2 3; do
  # curl upload
  ID=$(curl -s -X POST $B/v1/projects/field/files -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d "{\"name\":\"big.bin\",\"size\":$((200*1024*1024)),\"sha256\":\"$SHA\"}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  S0=$(rss $SERVER); T0=$(now)
  curl -s -o /dev/null -X PUT -T $D/big.bin -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/octet-stream' $B/v1/projects/field/files/$ID/upload
  curl -s -o /dev/null -X POST -H "Authorization: Bearer $TOKEN" $B/v1/projects/field/files/$ID/complete
  T1=$(now)
  echo "curl upload (PUT and complete): $(mbps $T0 $T1) MB/s"
  T0=$(now); curl -s -o $D/curl.out -H "Authorization: Bearer $TOKEN" $B/v1/projects/field/files/$ID/content; T1=$(now)
  echo "curl download: $(mbps $T0 $T1) MB/s"
  # cairn files (the SDK in a process of its own)
  rm -rf $D/cli.sqlite*
  $C files list --store $D/cli.sqlite --server $B --project field --user ada > /dev/null
  T0=$(now)
  /usr/bin/time -f "%M" -o $D/cli-up.kb $C files upload $D/big.bin --store $D/cli.sqlite > $D/id.txt 2>/dev/null
  T1=$(now)
  echo "cairn files upload: $(mbps $T0 $T1) MB/s, client peak $(( $(cat $D/cli-up.kb) / 1024 )) MB"
  CID=$(cat $D/id.txt)
  rm -rf $D/cli2.sqlite* $D/cli.out; $C files list --store $D/cli2.sqlite --server $B --project field --user ada > /dev/null
  T0=$(now)
  /usr/bin/time -f "%M" -o $D/cli-down.kb $C files download $CID --output $D/cli.out --store $D/cli2.sqlite > /dev/null 2>&1
  T1=$(now)
  echo "cairn files download: $(mbps $T0 $T1) MB/s, client peak $(( $(cat $D/cli-down.kb) / 1024 )) MB"
  cmp $D/cli.out $D/big.bin && echo "bytes equal"
  echo "server RSS now $(( $(rss $SERVER) / 1024 )) MB, peak $(( $(hwm $SERVER) / 1024 )) MB"
done
