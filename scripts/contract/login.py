"""Prints the access token of `POST BASE/v1/auth/login` for USER with PASSWORD (standard library only).

    token="$(python3 scripts/contract/login.py http://127.0.0.1:8080 ada "$CAIRN_PASSWORD")"
"""
import json
import sys
import urllib.request

base, user, password = sys.argv[1:4]
body = json.dumps({"username": user, "password": password}).encode()
request = urllib.request.Request(base + "/v1/auth/login", data=body, headers={"Content-Type": "application/json"})
print(json.load(urllib.request.urlopen(request, timeout=10))["accessToken"])
