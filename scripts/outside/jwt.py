"""Sign-in through an identity provider, checked from outside against a live `cairn serve`.

Python's standard library and `cryptography` only: it makes its own RS256, ES256 and Ed25519 keys, serves their JWKS
with http.server (and writes one to a file), signs its own tokens, starts the built `cairn` and checks with urllib
that a valid token pulls and pushes, that each bad token is refused with 401 and a reason, that a key added to the
JWKS is picked up on an unknown kid, and that wrong passwords from one address do not lock the user out from another.

Usage: python3 scripts/outside/jwt.py [path/to/cairn]   (default: $CAIRN, else .build/debug/cairn)
"""
import base64
import http.client
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from cryptography.hazmat.primitives import hashes, hmac, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CAIRN = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CAIRN", os.path.join(ROOT, ".build", "debug", "cairn"))
ISSUER = "https://login.example.test/"
AUDIENCE = "cairn-outside"
PASSWORD = "an outside password"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def integer_bytes(value, length=None):
    length = length or (value.bit_length() + 7) // 8
    return value.to_bytes(length, "big")


class Key:
    """A signing key of one accepted algorithm, with the JWK of its public half."""

    def __init__(self, kind, kid):
        self.kid = kid
        if kind == "RS256":
            self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            numbers = self.private.public_key().public_numbers()
            self.jwk = {"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
                        "n": b64url(integer_bytes(numbers.n)), "e": b64url(integer_bytes(numbers.e))}
        elif kind == "ES256":
            self.private = ec.generate_private_key(ec.SECP256R1())
            numbers = self.private.public_key().public_numbers()
            self.jwk = {"kty": "EC", "kid": kid, "crv": "P-256",
                        "x": b64url(integer_bytes(numbers.x, 32)), "y": b64url(integer_bytes(numbers.y, 32))}
        else:
            self.private = ed25519.Ed25519PrivateKey.generate()
            raw = self.private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
            self.jwk = {"kty": "OKP", "kid": kid, "crv": "Ed25519", "x": b64url(raw)}
        self.alg = kind

    def sign(self, data):
        if self.alg == "RS256":
            return self.private.sign(data, padding.PKCS1v15(), hashes.SHA256())
        if self.alg == "ES256":
            r, s = decode_dss_signature(self.private.sign(data, ec.ECDSA(hashes.SHA256())))
            return integer_bytes(r, 32) + integer_bytes(s, 32)
        return self.private.sign(data)


def token(claims, key=None, alg=None, kid=None, sign=None):
    header = {"alg": alg or key.alg, "kid": kid or key.kid, "typ": "JWT"}
    signing_input = (b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())).encode()
    signature = sign(signing_input) if sign else key.sign(signing_input)
    return signing_input.decode() + "." + b64url(signature)


def claims(sub="outside-user", **extra):
    now = int(time.time())
    values = {"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "iat": now, "exp": now + 300,
              "cairn": {"projects": {"field": "writer"}}, "region": "north"}
    for name, value in extra.items():
        if value is None:
            values.pop(name, None)
        else:
            values[name] = value
    return values


class JWKS:
    """A JWKS served over HTTP on a free loopback port; the document can change, fetches are counted."""

    def __init__(self, keys):
        self.keys = list(keys)
        self.fetches = 0
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                owner.fetches += 1
                body = json.dumps({"keys": [key.jwk for key in owner.keys]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Cache-Control", "max-age=600")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/jwks.json" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def call(base, method, path, bearer=None, body=None, source=None):
    """One request; `source` binds the client's address (another loopback address stands for another machine)."""
    host, port = re.match(r"http://([^:]+):(\d+)", base).groups()
    connection = http.client.HTTPConnection(host, int(port), timeout=20, source_address=(source, 0) if source else None)
    headers = {"Content-Type": "application/json"}
    if bearer:
        headers["Authorization"] = "Bearer " + bearer
    connection.request(method, path, body=json.dumps(body).encode() if body is not None else None, headers=headers)
    response = connection.getresponse()
    raw = response.read()
    connection.close()
    return response.status, (json.loads(raw) if raw else None)


def serve(work, data, *flags):
    """Starts `cairn serve` on a free port; returns (process, base URL)."""
    log = open(os.path.join(work, "serve-%d.log" % time.monotonic_ns()), "w+")
    process = subprocess.Popen([CAIRN, "serve", "--data", data, "--host", "127.0.0.1", "--port", "0", *flags],
                               stdout=log, stderr=subprocess.STDOUT)
    for _ in range(300):
        log.seek(0)
        found = re.search(r"listening on (http://127\.0\.0\.1:\d+)", log.read())
        if found:
            return process, found.group(1)
        if process.poll() is not None:
            break
        time.sleep(0.1)
    stop(process)
    log.seek(0)
    raise SystemExit("FAILED: cairn serve did not start:\n" + log.read())


def stop(process):
    """SIGTERM, up to 15 s to exit, then SIGKILL; nothing for a process that already ended."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def check(condition, what):
    if not condition:
        raise SystemExit("FAILED: " + what)
    print("ok   " + what)


def main():
    if not os.path.exists(CAIRN):
        raise SystemExit("FAILED: no cairn binary at %s (build it, or pass its path)" % CAIRN)
    work = tempfile.mkdtemp(prefix="cairn-jwt-")
    processes = []
    try:
        data = os.path.join(work, "data")
        schema = os.path.join(work, "schema.json")
        with open(schema, "w") as file:
            json.dump({"collections": [{"name": "jobs", "fields": [{"name": "title", "type": "string"}]}]}, file)
        admin = [CAIRN, "admin", "--data", data]
        subprocess.run(admin + ["add-project", "field"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(admin + ["set-schema", "--project", "field", schema], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(admin + ["add-user", "alice", "--password", PASSWORD], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(admin + ["grant", "alice", "--project", "field", "--role", "reader"], check=True, stdout=subprocess.DEVNULL)

        rs, es, ed = Key("RS256", "rs-1"), Key("ES256", "es-1"), Key("EdDSA", "ed-1")
        jwks = JWKS([rs, es])
        process, base = serve(work, data, "--jwks", jwks.url, "--jwt-issuer", ISSUER, "--jwt-audience", AUDIENCE)
        processes.append(process)

        print("== valid tokens pull and push")
        for key in (rs, es):
            bearer = token(claims(), key)
            status, _ = call(base, "GET", "/v1/projects/field/collections/jobs/changes", bearer)
            check(status == 200, "a valid %s token pulls (200, got %d)" % (key.alg, status))
        status, answer = call(base, "POST", "/v1/projects/field/batch", token(claims(), rs), {"operations": [
            {"opId": "jwt-outside-1", "collection": "jobs", "id": "job-1", "op": "create", "data": {"title": "from the provider"}}]})
        check(status == 200 and answer["results"][0]["status"] == "applied", "a valid token pushes (%d %s)" % (status, answer))
        status, page = call(base, "GET", "/v1/projects/field/collections/jobs/changes", token(claims(), es))
        check(status == 200 and [change["id"] for change in page["changes"]] == ["job-1"]
              and page["changes"][0]["updatedBy"] == "outside-user", "the pull holds the pushed record, by the token's sub")

        print("== a token's claims drive data rules; refusals and explain")
        with open(schema, "w") as file:
            json.dump({"collections": [{"name": "jobs", "fields": [
                {"name": "title", "type": "string"}, {"name": "assignee", "type": "string"}, {"name": "region", "type": "string"}],
                "rules": {"read": {"field": "region", "op": "eq", "value": {"param": "claims.region"}},
                          "write": {"field": "assignee", "op": "eq", "value": {"param": "user.name"}}}}]}, file)
        subprocess.run(admin + ["set-schema", "--project", "field", schema], check=True, stdout=subprocess.DEVNULL)
        boss = token(claims(sub="boss", cairn={"projects": {"field": "admin"}}), rs)
        status, answer = call(base, "POST", "/v1/projects/field/batch", boss, {"operations": [
            {"opId": "jwt-rules-1", "collection": "jobs", "id": "n-1", "op": "create", "data": {"assignee": "outside-user", "region": "north"}},
            {"opId": "jwt-rules-2", "collection": "jobs", "id": "s-1", "op": "create", "data": {"assignee": "someone", "region": "south"}},
            {"opId": "jwt-rules-3", "collection": "jobs", "id": "n-2", "op": "create", "data": {"assignee": "someone", "region": "north"}}]})
        check(status == 200 and all(result["status"] == "applied" for result in answer["results"]), "an admin token pushes jobs (%d)" % status)
        for region, expected in (("north", ["n-1", "n-2"]), ("south", ["s-1"])):
            status, page = call(base, "GET", "/v1/projects/field/collections/jobs/changes", token(claims(region=region), es))
            got = sorted(change["id"] for change in page.get("changes", []))
            check(status == 200 and got == expected, "a token with region %s pulls exactly %s (got %s)" % (region, expected, got))
        status, answer = call(base, "POST", "/v1/projects/field/batch", token(claims(), rs), {"operations": [
            {"opId": "jwt-rules-4", "collection": "jobs", "id": "n-2", "op": "patch", "data": {"title": "not mine"}}]})
        result = answer["results"][0] if status == 200 else {}
        check(result.get("status") == "rejected" and result.get("error", {}).get("code") == "forbidden" and "current" not in result,
              "a write outside the write rule is refused as forbidden, without the record (%s)" % result)
        query = "/v1/projects/field/explain?user=outside-user&collection=jobs&id=n-2&role=writer&claims=" + urllib.parse.quote('{"region":"north"}')
        status, why = call(base, "GET", query, boss)
        check(status == 200 and why["read"]["allowed"] and not why["write"]["allowed"]
              and [c["path"] for c in why["write"]["conditions"] if c["decides"]] == ["write"],
              "explain, for the token's role and claims, says read allowed and which condition refuses the write")
        status, _ = call(base, "GET", query, token(claims(), rs))
        check(status == 403, "explain is for project admins (a writer gets 403, got %d)" % status)

        print("== bad tokens are refused with 401 and a reason")
        now = int(time.time())
        public_pem = rs.private.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)

        def hs256_with_public_key(data):
            mac = hmac.HMAC(public_pem, hashes.SHA256())
            mac.update(data)
            return mac.finalize()

        valid = token(claims(), es)
        tampered = valid[:-4] + ("AAAA" if not valid.endswith("AAAA") else "BBBB")
        cases = [
            ("alg none", token(claims(), alg="none", kid="rs-1", sign=lambda data: b""), "alg none"),
            ("HS256 with the public key as secret", token(claims(), alg="HS256", kid="rs-1", sign=hs256_with_public_key), "HMAC"),
            ("unknown kid", token(claims(), es, kid="nobody"), "is not in the identity provider's JWKS"),
            ("bad signature", tampered, "signature"),
            ("expired", token(claims(exp=now - 120), rs), "expired"),
            ("not yet valid", token(claims(nbf=now + 120), rs), "not valid before"),
            ("wrong issuer", token(claims(iss="https://evil.example/"), rs), "issuer"),
            ("wrong audience", token(claims(aud="someone-else"), rs), "audience"),
            ("roles claim of the wrong shape", token(claims(cairn={"field": "writer"}), rs), "roles claim"),
        ]
        for name, bearer, reason in cases:
            status, answer = call(base, "GET", "/v1/projects/field/collections/jobs/changes", bearer)
            message = (answer or {}).get("error", {}).get("message", "")
            check(status == 401 and answer["error"]["code"] == "unauthorized" and reason in message and bearer not in message,
                  "%s: 401 unauthorized naming the check (%d: %s)" % (name, status, message))
        status, _ = call(base, "GET", "/v1/projects/other/schema", token(claims(), rs))
        check(status == 404, "a project the roles claim does not name is not found (404, got %d)" % status)

        print("== a key added to the JWKS is picked up on an unknown kid (rate-limited to one fetch per 30 s)")
        fetches = jwks.fetches
        jwks.keys.append(ed)
        status, _ = call(base, "GET", "/v1/projects/field/schema", token(claims(), ed))
        check(status == 401 and jwks.fetches == fetches, "just after a fetch, an unknown kid is refused without a fetch")
        time.sleep(31)
        status, _ = call(base, "GET", "/v1/projects/field/schema", token(claims(), ed))
        check(status == 200 and jwks.fetches == fetches + 1, "31 s later the unknown kid makes one fetch, and signs in")

        print("== wrong passwords from one address do not lock the user out from another")
        for _ in range(5):
            status, _ = call(base, "POST", "/v1/auth/login", body={"username": "alice", "password": "a wrong guess"}, source="127.0.0.2")
            check(status == 401, "a wrong password from 127.0.0.2 is refused (401)")
        status, answer = call(base, "POST", "/v1/auth/login", body={"username": "alice", "password": PASSWORD}, source="127.0.0.2")
        check(status == 429 and answer["error"]["code"] == "rate_limited", "then 127.0.0.2 is throttled, right password or not (429)")
        status, answer = call(base, "POST", "/v1/auth/login", body={"username": "alice", "password": PASSWORD}, source="127.0.0.1")
        check(status == 200 and answer["user"]["name"] == "alice", "alice from 127.0.0.1 still signs in (200, got %d)" % status)

        print("== a JWKS file")
        stop(process)
        processes.remove(process)
        keys = os.path.join(work, "jwks.json")
        with open(keys, "w") as file:
            json.dump({"keys": [ed.jwk]}, file)
        process, base = serve(work, data, "--jwks", keys, "--jwt-issuer", ISSUER, "--jwt-audience", AUDIENCE)
        processes.append(process)
        status, _ = call(base, "GET", "/v1/projects/field/collections/jobs/changes", token(claims(), ed))
        check(status == 200, "an EdDSA token checked against a JWKS file pulls (200, got %d)" % status)
        stop(process)
        processes.remove(process)
        with open(keys, "w") as file:
            json.dump({"keys": [{"kty": "oct", "kid": "h", "k": b64url(b"a shared secret")}]}, file)
        refused = subprocess.run([CAIRN, "serve", "--data", data, "--port", "0", "--jwks", keys, "--jwt-issuer", ISSUER,
                                  "--jwt-audience", AUDIENCE], capture_output=True, text=True, timeout=60)
        check(refused.returncode != 0 and "--jwks" in refused.stderr, "a JWKS file with no usable key stops serve (%r)" % refused.stderr.strip())
        refused = subprocess.run([CAIRN, "serve", "--data", data, "--port", "0", "--jwks", keys, "--jwt-audience", AUDIENCE],
                                 capture_output=True, text=True, timeout=60)
        check(refused.returncode != 0 and "--jwt-issuer" in refused.stderr, "--jwks without --jwt-issuer is refused")
        print("identity provider check: all passed")
    finally:
        for process in processes:
            stop(process)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
