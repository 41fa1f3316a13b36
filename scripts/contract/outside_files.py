"""Files from outside: the three upload steps as PROTOCOL.md states them, with Python's standard library, curl and
the cairn tool, against a live server. Usage: outside_files.py BASE_URL TOKEN CAIRN_BINARY PASSWORD"""
import hashlib
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

base, token, cairn, password = sys.argv[1:5]
host = base.removeprefix("http://")
files = "/v1/projects/field/files"


def call(method, path, body=None, query=None, headers=None, raw=None, auth=True):
    url = base + path + ("?" + urllib.parse.urlencode(query, doseq=True) if query else "")
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    all_headers = {"Content-Type": "application/octet-stream" if raw is not None else "application/json"}
    if auth:
        all_headers["Authorization"] = "Bearer " + token
    all_headers.update(headers or {})
    request = urllib.request.Request(url, data=data, method=method, headers=all_headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            content = response.read()
            return response.status, content, response.headers
    except urllib.error.HTTPError as error:
        return error.code, error.read(), error.headers


def json_of(content):
    return json.loads(content) if content else None


payload = os.urandom(3 * 1024 * 1024 + 17)
digest = hashlib.sha256(payload).hexdigest()

# 1. Create, with a tag, private.
status, content, headers = call("POST", files, {"name": "../../etc/passwd", "contentType": "application/pdf", "size": len(payload),
                                                "sha256": digest, "tags": ["outside", "report"]})
assert status == 201, (status, content)
created = json_of(content)
assert created["status"] == "new" and created["uploadOffset"] == 0 and created["name"] == "../../etc/passwd", created
upload = created["uploadUrl"]
file_id = created["id"]

# 2. A first chunk whose connection breaks part-way: a raw socket sends the headers and 1 MB of a 2 MB body, then closes.
sock = socket.create_connection((host.split(":")[0], int(host.split(":")[1])), timeout=10)
first = payload[: 2 * 1024 * 1024]
head = (f"PUT {upload} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/octet-stream\r\n"
        f"Content-Range: bytes 0-{len(first) - 1}/{len(payload)}\r\nContent-Length: {len(first)}\r\n\r\n").encode()
sock.sendall(head + first[: 1024 * 1024])
sock.close()
offset = None
for _ in range(100):
    status, _, headers = call("HEAD", upload)
    assert status == 200, status
    offset = int(headers["Upload-Offset"])
    if offset == 1024 * 1024:
        break
    time.sleep(0.05)
assert offset == 1024 * 1024, offset
assert int(headers["Upload-Length"]) == len(payload)

# A chunk at the wrong offset is refused with the offset; then the rest goes from Upload-Offset.
status, content, headers = call("PUT", upload, raw=payload[:10], headers={"Content-Range": f"bytes 0-9/{len(payload)}"})
assert status == 409 and json_of(content)["error"]["code"] == "offset_mismatch" and headers["Upload-Offset"] == str(offset), (status, content)
status, content, headers = call("POST", f"{files}/{file_id}/complete")
assert status == 409 and json_of(content)["error"]["code"] == "upload_incomplete", (status, content)
status, content, headers = call("PUT", upload, raw=payload[offset:], headers={"Content-Range": f"bytes {offset}-{len(payload) - 1}/{len(payload)}"})
assert status == 200 and headers["Upload-Offset"] == str(len(payload)), (status, content)

# 3. Complete: verified.
status, content, _ = call("POST", f"{files}/{file_id}/complete")
done = json_of(content)
assert status == 200 and done["status"] == "completed" and done["sha256"] == digest, (status, content)
print(f"outside files: created, cut at {offset} bytes, resumed from Upload-Offset, completed with the right SHA-256")

# A wrong SHA-256 is refused and the file stays new.
status, content, _ = call("POST", files, {"name": "wrong.bin", "size": 4, "sha256": "0" * 64, "tags": ["outside"]})
wrong = json_of(content)
call("PUT", wrong["uploadUrl"], raw=b"abcd")
status, content, _ = call("POST", f"{files}/{wrong['id']}/complete")
assert status == 422 and json_of(content)["error"]["code"] == "checksum_mismatch", (status, content)
status, content, _ = call("GET", f"{files}/{wrong['id']}")
assert json_of(content)["status"] == "new"

# Search by tags and status.
status, content, _ = call("GET", files, query={"tag": ["outside", "report"], "status": "completed"})
assert status == 200 and [f["id"] for f in json_of(content)["files"]] == [file_id], content
status, content, _ = call("GET", files, query={"tag": "outside", "status": "new"})
assert [f["id"] for f in json_of(content)["files"]] == [wrong["id"]], content
print("outside files: a wrong SHA-256 refused (the file stays new); search by tags and status")

# Downloads with curl: Range, ETag, and private versus public.
def curl(*arguments):
    return subprocess.run(["curl", "-s", "-D", "-", "-o", "-", *arguments], capture_output=True, check=True).stdout


def split(response):
    head, _, body = response.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    return int(lines[0].split()[1]), {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip() for line in lines[1:]}, body


status, headers, body = split(curl("-H", f"Authorization: Bearer {token}", "-H", "Range: bytes=100-199", f"{base}{files}/{file_id}/content"))
assert status == 206 and body == payload[100:200] and headers["content-range"] == f"bytes 100-199/{len(payload)}", (status, headers)
status, headers, body = split(curl("-H", f"Authorization: Bearer {token}", f"{base}{files}/{file_id}/content"))
assert status == 200 and body == payload and headers["etag"] == f'"{digest}"', status
assert "filename*=UTF-8''..%2F..%2Fetc%2Fpasswd" in headers["content-disposition"], headers["content-disposition"]
status, _, _ = split(curl(f"{base}/v1/public/files/{file_id}"))
assert status == 404, status
status, content, _ = call("PATCH", f"{files}/{file_id}", {"public": True})
assert status == 200 and json_of(content)["public"] is True
status, headers, body = split(curl("-H", "Range: bytes=-10", f"{base}/v1/public/files/{file_id}"))
assert status == 206 and body == payload[-10:], status
call("PATCH", f"{files}/{file_id}", {"public": False})
status, _, _ = split(curl(f"{base}/v1/public/files/{file_id}"))
assert status == 404, status
print("outside files: curl downloads a Range and the whole file with its ETag; public reads need no token, private ones 404")

# The tool: upload and download through a store, then delete from outside.
with tempfile.TemporaryDirectory() as folder:
    source = os.path.join(folder, "photo.jpg")
    with open(source, "wb") as handle:
        handle.write(payload[:500_000])
    store = os.path.join(folder, "cli.sqlite")
    environment = dict(os.environ, CAIRN_PASSWORD=password)
    common = ["--store", store, "--server", base, "--project", "field", "--user", "ada"]
    done = subprocess.run([cairn, "files", "upload", source, "--tag", "cli", *common], capture_output=True, text=True, env=environment)
    assert done.returncode == 0, done.stderr
    cli_id = done.stdout.strip()
    assert "upload photo.jpg: 100%" in done.stderr, done.stderr
    listed = subprocess.run([cairn, "files", "list", "--tag", "cli", "--store", store], capture_output=True, text=True, env=environment)
    assert listed.returncode == 0 and listed.stdout.startswith(cli_id + "\tcompleted\t500000\tphoto.jpg"), listed.stdout
    copy = os.path.join(folder, "copy.jpg")
    fetched = subprocess.run([cairn, "files", "download", cli_id, "--output", copy, "--store", store], capture_output=True, text=True, env=environment)
    assert fetched.returncode == 0, fetched.stderr
    assert open(copy, "rb").read() == payload[:500_000]
    missing = subprocess.run([cairn, "files", "info", "no-such-file", "--store", store], capture_output=True, text=True, env=environment)
    assert missing.returncode == 1 and "not_found" in missing.stderr, (missing.returncode, missing.stderr)
print("outside files: cairn files upload, list, download; a missing id exits 1 naming not_found")

# Delete: the bytes are gone and the status is deleted.
status, content, _ = call("DELETE", f"{files}/{file_id}")
assert status == 200 and json_of(content)["status"] == "deleted", (status, content)
status, content, _ = call("GET", f"{files}/{file_id}/content")
assert status == 409 and json_of(content)["error"]["code"] == "file_not_ready", (status, content)
status, content, _ = call("GET", files, query={"status": "deleted"})
assert file_id in [f["id"] for f in json_of(content)["files"]]
print("outside files: delete marks the file deleted and its content is gone")
