"""An encrypted store from outside: `cairn store encrypt`, sync with --key-file and CAIRN_STORE_KEY, no marker on disk.
Usage: outside_store_key.py CAIRN_BINARY BASE_URL PASSWORD   (the server run.sh started; user ada, project field)

Makes a plaintext store with `cairn sync`, puts a record holding a random marker, encrypts the store with
`cairn store encrypt`, syncs it, and checks that the record reached the server. Then it searches every file of the
store's folder for the marker as UTF-8, UTF-16 (both byte orders), base64 and hex: nothing may be found, also after
a `cairn sync --watch` holding the store is killed with SIGKILL (leaving its WAL behind). A wrong passphrase must
fail with wrong_key and exit 1, a missing one with key_required; after `cairn store rekey`, the old passphrase fails
and the new one reads the marker. Files go the same way: a file holding the marker, uploaded through `cairn files
upload` before the store is encrypted, is sealed by `cairn store encrypt`; another one uploaded and then downloaded
through the encrypted store (to standard output and to a file outside the store's folder) comes back byte for byte,
and neither is readable in the store's files folder.
"""
import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import uuid

cairn, base, password = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
here = os.path.dirname(os.path.abspath(__file__))
folder = tempfile.mkdtemp(prefix="cairn-outside-key-")
store = os.path.join(folder, "field.sqlite")
marker = "MARKER-" + uuid.uuid4().hex
environment = dict(os.environ, CAIRN_PASSWORD=password)
environment.pop("CAIRN_STORE_KEY", None)


def fail(message):
    print("outside store key: FAILED: " + message)
    shutil.rmtree(folder, ignore_errors=True)
    sys.exit(1)


def run(*arguments, expect=0, extra=None):
    done = subprocess.run([cairn, *arguments], capture_output=True, text=True, env=dict(environment, **(extra or {})),
                          stdin=subprocess.DEVNULL, timeout=60)
    if expect is not None and done.returncode != expect:
        fail(f"`cairn {' '.join(arguments)}` exited {done.returncode}, expected {expect}\n{done.stdout}\n{done.stderr}")
    return done


def key_file(name, text):
    path = os.path.join(folder, name)
    with open(path, "w") as handle:
        handle.write(text + "\n")
    return path


def marker_forms(text):
    raw = text.encode()
    return {"utf8": raw, "utf16le": text.encode("utf-16-le"), "utf16be": text.encode("utf-16-be"),
            "base64": base64.b64encode(raw)[:-4], "hex": raw.hex().encode(), "HEX": raw.hex().upper().encode()}


def markers_on_disk(where, expect_none=True):
    found = []
    for root, _, names in os.walk(folder):
        for name in names:
            if name.endswith(".key"):
                continue
            with open(os.path.join(root, name), "rb") as handle:
                data = handle.read()
            found += [f"{name}: {form}" for form, raw in marker_forms(marker).items() if raw in data]
    if expect_none and found:
        fail(f"{where}: the marker is readable on disk: {found}")
    if not expect_none and not found:
        fail(f"{where}: the search did not find the marker in a plaintext store (the search itself is broken)")


with open(os.path.join(here, "schema.json")) as handle:
    schema = json.load(handle)
collection, field = next((c["name"], f["name"]) for c in schema["collections"] for f in c["fields"] if f["type"] == "string")

def marker_file(name):
    outside = tempfile.mkdtemp(prefix="cairn-outside-file-")
    path = os.path.join(outside, name)
    with open(path, "wb") as handle:
        handle.write(b"".join(f"{marker} line {index}\n".encode() for index in range(20000)))
    return path


run("sync", "--store", store, "--server", base, "--project", "field", "--user", "ada")
run("put", "--store", store, collection, "outside-key-1", json.dumps({field: marker}))
first_file = marker_file("first.txt")
first_id = run("files", "upload", "--store", store, first_file).stdout.strip()
markers_on_disk("before encrypt", expect_none=False)
first_key = key_file("first.key", "outside passphrase " + uuid.uuid4().hex)
run("store", "encrypt", "--store", store, "--new-key-file", first_key)
markers_on_disk("after encrypt")
run("sync", "--store", store, "--key-file", first_key)
run("put", "--store", store, collection, "outside-key-2", json.dumps({field: marker + " again"}),
    extra={"CAIRN_STORE_KEY": open(first_key).read().strip()})
markers_on_disk("after a put through CAIRN_STORE_KEY")

second_file = marker_file("second.txt")
second_id = run("files", "upload", "--store", store, "--key-file", first_key, second_file).stdout.strip()
markers_on_disk("after an upload through the encrypted store")
for file_id, source in ((first_id, first_file), (second_id, second_file)):
    expected = open(source, "rb").read()
    streamed = subprocess.run([cairn, "files", "download", "--store", store, "--key-file", first_key, file_id, "-o", "-"],
                              capture_output=True, env=environment, stdin=subprocess.DEVNULL, timeout=60)
    if streamed.returncode != 0 or streamed.stdout != expected:
        fail(f"`cairn files download {file_id} -o -` did not give back the uploaded bytes: {streamed.stderr.decode()}")
    copy = os.path.join(os.path.dirname(source), "copy.txt")
    run("files", "download", "--store", store, "--key-file", first_key, file_id, "-o", copy)
    if open(copy, "rb").read() != expected:
        fail(f"`cairn files download {file_id} -o FILE` did not write the uploaded bytes")
    shutil.rmtree(os.path.dirname(source), ignore_errors=True)
markers_on_disk("after downloads through the encrypted store")

# A watcher holds the store open; a put wakes it; SIGKILL leaves the WAL behind.
watcher = subprocess.Popen([cairn, "sync", "--watch", "--store", store, "--key-file", first_key], env=environment,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
try:
    time.sleep(2)
    run("put", "--store", store, collection, "outside-key-3", json.dumps({field: marker + " third"}), extra={"CAIRN_STORE_KEY": open(first_key).read().strip()})
    time.sleep(3)
finally:  # also when the put failed: the watcher never outlives the check
    watcher.send_signal(signal.SIGKILL)
    watcher.wait()
if not os.path.exists(store + "-wal"):
    fail("the killed watcher left no WAL to search")
markers_on_disk("after a killed sync --watch left its WAL")

login = urllib.request.Request(base + "/v1/auth/login", data=json.dumps({"username": "ada", "password": password}).encode(),
                               headers={"Content-Type": "application/json"})
token = json.load(urllib.request.urlopen(login, timeout=10))["accessToken"]
changes = urllib.request.Request(base + f"/v1/projects/field/collections/{collection}/changes?limit=1000",
                                 headers={"Authorization": "Bearer " + token})
ids = set()
page = json.load(urllib.request.urlopen(changes, timeout=10))
ids.update(change["id"] for change in page["changes"])
while page.get("hasMore"):
    more = urllib.request.Request(base + f"/v1/projects/field/collections/{collection}/changes?limit=1000&since="
                                  + urllib.parse.quote(page["cursor"]), headers={"Authorization": "Bearer " + token})
    page = json.load(urllib.request.urlopen(more, timeout=10))
    ids.update(change["id"] for change in page["changes"])
for wanted in ("outside-key-1", "outside-key-2", "outside-key-3"):
    if wanted not in ids:
        fail(f"{wanted}, written in the encrypted store, did not reach the server")

query = ["query", "--store", store, f"SELECT {field} AS value FROM {collection} WHERE id = 'outside-key-1'"]
wrong = run(*query, "--key-file", key_file("wrong.key", "not the passphrase"), expect=1)
if "wrong_key" not in wrong.stderr:
    fail("a wrong passphrase did not say wrong_key: " + wrong.stderr)
missing = run(*query, expect=1)
if "key_required" not in missing.stderr:
    fail("a missing passphrase did not say key_required: " + missing.stderr)
second_key = key_file("second.key", "raw:" + os.urandom(32).hex())
run("store", "rekey", "--store", store, "--key-file", first_key, "--new-key-file", second_key)
if "wrong_key" not in run(*query, "--key-file", first_key, expect=1).stderr:
    fail("the old passphrase still opens the store after rekey")
if marker not in run(*query, "--key-file", second_key).stdout:
    fail("the new key does not read the record after rekey")
markers_on_disk("after rekey")
shutil.rmtree(folder, ignore_errors=True)
print("outside store key: encrypted, synced 3 records and 2 files, no marker on disk in 6 forms (also with a WAL left by "
      "SIGKILL), files downloaded byte for byte, wrong_key and key_required refused, rekey checked")
