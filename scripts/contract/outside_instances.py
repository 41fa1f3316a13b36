"""Two Cairn servers on one PostgreSQL database, as an ordinary Python client meets them: a write through one is
read through the other, the same batch sent to both at once applies once, a live notice crosses from one to the
other, a file uploaded through one downloads through the other, and a sign-in on one is valid on the other."""
import hashlib
import json
import sys
import threading
import urllib.error
import urllib.request

first, second, token = sys.argv[1], sys.argv[2], sys.argv[3]


def call(base, method, path, body=None, raw=None, headers=None):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(base + path, data=data, method=method, headers={
        "Authorization": "Bearer " + token, "Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            payload = response.read()
            kind = response.headers.get("Content-Type", "")
            return response.status, (json.loads(payload or b"null") if "json" in kind else payload)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def changes(base):
    status, page = call(base, "GET", "/v1/projects/field/collections/notes/changes?limit=1000")
    assert status == 200, (status, page)
    return page


# A write through the first is read through the second.
status, answer = call(first, "POST", "/v1/projects/field/batch", {"operations": [
    {"opId": "instances-1", "collection": "notes", "id": "across-1", "op": "create", "data": {"title": "from the first"}}]})
assert status == 200 and answer["results"][0]["status"] == "applied", (status, answer)
version = answer["results"][0]["record"]["version"]
page = changes(second)
assert any(change["id"] == "across-1" and change["version"] == version for change in page["changes"]), page
print("instances: a write through one is read through the other")

# The same batch sent to both at once applies once.
batch = {"operations": [{"opId": f"instances-twice-{n}", "collection": "notes", "id": f"twice-{n}", "op": "create",
                         "data": {"title": "once"}} for n in range(5)]}
answers = [None, None]
threads = [threading.Thread(target=lambda i=i, base=base: answers.__setitem__(i, call(base, "POST", "/v1/projects/field/batch", batch)))
           for i, base in enumerate([first, second])]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
versions = [[result["record"]["version"] for result in answer[1]["results"]] for answer in answers]
assert answers[0][0] == answers[1][0] == 200 and versions[0] == versions[1], answers
assert sorted(change["version"] for change in changes(first)["changes"] if change["id"].startswith("twice-")) == versions[0]
print("instances: the same batch sent to both at once applied once, both answers alike")

# A live notice crosses: a stream on the second sees a write through the first.
request = urllib.request.Request(second + "/v1/projects/field/events", headers={"Authorization": "Bearer " + token})
stream = urllib.request.urlopen(request, timeout=10)
assert stream.readline().startswith(b": connected"), "no greeting on the event stream"
status, answer = call(first, "POST", "/v1/projects/field/batch", {"operations": [
    {"opId": "instances-2", "collection": "notes", "id": "across-2", "op": "create", "data": {"title": "notice"}}]})
notice_version = answer["results"][0]["record"]["version"]
seen = None
for _ in range(50):
    line = stream.readline().decode().strip()
    if line.startswith("data:"):
        seen = json.loads(line[5:])
        if seen["version"] == notice_version:
            break
stream.close()
assert seen == {"collection": "notes", "version": notice_version}, seen
print("instances: a live notice of a write through one arrived on the other's stream")

# A file uploaded through the first downloads through the second, byte for byte.
content = bytes(range(256)) * 9000
status, created = call(first, "POST", "/v1/projects/field/files", {
    "name": "across.bin", "contentType": "application/octet-stream", "size": len(content), "sha256": hashlib.sha256(content).hexdigest()})
assert status == 201, (status, created)
half = len(content) // 2
status, _ = call(first, "PUT", f"/v1/projects/field/files/{created['id']}/upload", raw=content[:half],
                 headers={"Content-Type": "application/octet-stream", "Content-Range": f"bytes 0-{half - 1}/{len(content)}"})
assert status == 200, status
status, _ = call(second, "PUT", f"/v1/projects/field/files/{created['id']}/upload", raw=content[half:],
                 headers={"Content-Type": "application/octet-stream", "Content-Range": f"bytes {half}-{len(content) - 1}/{len(content)}"})
assert status == 200, status
status, done = call(second, "POST", f"/v1/projects/field/files/{created['id']}/complete")
assert status == 200 and done["status"] == "completed", (status, done)
status, body = call(first, "GET", f"/v1/projects/field/files/{created['id']}/content")
assert status == 200 and body == content, (status, len(body))
print("instances: a file uploaded half through each downloads whole through the first")
