"""An ordinary Python client against a live Cairn server: query strings as urllib and requests write them."""
import json
import sys
import urllib.error
import urllib.parse
import urllib.request

base, token = sys.argv[1], sys.argv[2]


def call(method, path, body=None, query=None):
    url = base + path + ("?" + urllib.parse.urlencode(query) if query else "")
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={
        "Authorization": "Bearer " + token, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null"), response.headers
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null"), error.headers


status, answer, _ = call("POST", "/v1/projects/field/batch", {"operations": [
    {"opId": "outside-1", "collection": "notes", "id": "py-1", "op": "create", "data": {"title": "a+b c", "done": False}},
    {"opId": "outside-2", "collection": "notes", "id": "py-2", "op": "create", "data": {"title": "other", "done": True}},
]})
assert status == 200 and all(result["status"] == "applied" for result in answer["results"]), (status, answer)
where = json.dumps({"and": [{"field": "done", "op": "eq", "value": False}, {"field": "title", "op": "eq", "value": "a+b c"}]})
query = urllib.parse.urlencode({"where": where})
assert "+" in query and "%2B" in query, query
status, page, _ = call("GET", "/v1/projects/field/collections/notes/changes", query={"where": where})
assert status == 200, (status, page)
assert [change["id"] for change in page["changes"]] == ["py-1"], page
status, body, headers = call("TRACE", "/v1/projects/field/schema")
assert status == 405 and headers["Allow"] == "GET, PUT", (status, body, dict(headers))
print("outside client: + for spaces served, %2B kept a plus, TRACE answered 405 with Allow")

# A malformed escape, sent byte for byte (urllib would re-encode it).
import http.client
connection = http.client.HTTPConnection(base.removeprefix("http://"), timeout=10)
connection.request("GET", "/v1/projects/field/collections/notes/changes?where=%zz", headers={"Authorization": "Bearer " + token})
response = connection.getresponse()
answer = json.loads(response.read())
assert response.status == 400 and answer["error"]["code"] == "bad_request", (response.status, answer)
print("outside client: a malformed % escape answered 400 bad_request")
