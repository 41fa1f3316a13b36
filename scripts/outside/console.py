"""The operators' console, driven in headless Chromium with Selenium against a live `cairn serve`.

Sets up a project with `cairn admin` (an operator, a project admin, writers and a reader; a `jobs` collection whose
rules read the user's name and claims), starts `cairn serve`, writes records (one titled
`<img src=x onerror=alert(1)>`), a file and a registered device over HTTP, then drives /console/ as an operator would:
a writer is refused; the project admin and the operator sign in; a filter narrows a collection; a record opens with
its `explain`; "view as user" lists exactly what that user pulls over HTTP; a schema with an error shows the server's
error; revoking a device's user makes that device's next sync answer 401; the XSS record shows as text and runs
nothing. On the Integrations page, as the project admin: a service key is made (its text shown once, then listed
without it; it signs requests in) and revoked (then refused); a webhook is added pointing at a receiver this script
runs on 127.0.0.1, shows `ok`, receives a change written over HTTP signed `sha256=HMAC-SHA256(secret, body)`, its
DELIVERED count goes up after a reload; the receiver answers 500 and the page shows `retrying`. It saves a screenshot of each page at 1280x800 and at 768x1024 into $CAIRN_CONSOLE_SCREENSHOTS (default: a
temporary folder it removes).

Needs Debian's `chromium` and `chromium-driver` and PyPI's `selenium` (.ci/run installs them).

Usage: python3 scripts/outside/console.py [path/to/cairn]   (default: $CAIRN, else .build/debug/cairn)
"""
import hashlib
import hmac
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# This folder holds queue.py, which would shadow the standard library's queue that Selenium's urllib3 imports: this
# folder goes to the end of the path, after the standard library.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [entry for entry in sys.path if os.path.abspath(entry or ".") != HERE] + [HERE]

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.select import Select
from selenium.webdriver.support.ui import WebDriverWait

import live_server
from live_server import call, check, serve, stop

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CAIRN = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CAIRN", os.path.join(ROOT, ".build", "debug", "cairn"))
PASSWORD = "an outside password"
PROJECT = "/v1/projects/field"
XSS = "<img src=x onerror=alert(1)>"
READ_RULE = {"or": [{"field": "assignee", "op": "eq", "value": {"param": "user.name"}},
                    {"field": "region", "op": "in", "value": {"param": "claims.regions"}}]}
WRITE_RULE = {"field": "assignee", "op": "eq", "value": {"param": "user.name"}}
SCHEMA = {"collections": [{"name": "jobs",
                           "fields": [{"name": "title", "type": "string"}, {"name": "assignee", "type": "string"},
                                      {"name": "region", "type": "string"}, {"name": "priority", "type": "integer"}],
                           "indexes": [["region"]], "conflictPolicy": "merge-fields",
                           "rules": {"read": READ_RULE, "write": WRITE_RULE}},
                          {"name": "notes", "fields": [{"name": "title", "type": "string"}]}]}
JOBS = [("j1", "Fix the north gate", "ana", "north", 2), ("j2", "Paint the south fence", "carl", "south", 1),
        ("j3", "Check bob's pump", "bob", "south", 3), ("j4", "Clear the north ditch", "carl", "north", 1),
        ("j5", "Inspect the east barn", "rita", "east", 2), ("j6", XSS, "carl", "north", 5)]
SIZES = [(1280, 800), (768, 1024)]
WEBHOOK_SECRET = "an outside webhook secret, 32+ bytes"
WEBHOOK_COLUMNS = ["name", "url", "collections", "status", "delivered", "behind", "failures", "last error",
                   "next attempt", "actions"]


def request(base, method, path, bearer=None, body=None, headers=None):
    """One request with extra headers (a device's Cairn-Client-ID); returns (status, parsed JSON or None)."""
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    if bearer:
        all_headers["Authorization"] = "Bearer " + bearer
    data = body if isinstance(body, bytes) else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(base + path, method=method, headers=all_headers, data=data)
    try:
        with urllib.request.urlopen(req, timeout=20) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    try:
        return status, (json.loads(raw) if raw else None)
    except ValueError:
        return status, None


def pull_ids(base, token, collection="jobs"):
    """The ids of the live records `token`'s user pulls from `collection` (every page)."""
    ids, since = set(), None
    for _ in range(100):
        query = {"limit": "2"}
        if since:
            query["since"] = since
        status, page = call(base, "GET", PROJECT + "/collections/%s/changes" % collection, token, query=query)
        if status != 200:
            raise SystemExit("FAILED: pull answered %d: %s" % (status, page))
        ids |= {c["id"] for c in page["changes"] if not c.get("deleted") and not c.get("gone")}
        since = page["cursor"]
        if not page["hasMore"]:
            return ids
    raise SystemExit("FAILED: the feed still had more after 100 pages")


class Receiver:
    """A webhook's receiver on 127.0.0.1 in a thread: records each POST (its headers, lowercased, and body bytes)
    and answers `status` (200 until a check changes it)."""

    def __init__(self):
        self.status = 200
        self.posts = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    body = b""
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            self.rfile.readline()
                            break
                        body += self.rfile.read(size)
                        self.rfile.readline()
                else:
                    body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.lock:
                    receiver.posts.append(({name.lower(): value for name, value in self.headers.items()}, body))
                    status = receiver.status
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/cairn" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def received(self):
        with self.lock:
            return list(self.posts)

    def wait_for(self, count, timeout=30):
        """The POSTs once there are at least `count`; stops the run after `timeout` seconds without them."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            posts = self.received()
            if len(posts) >= count:
                return posts
            time.sleep(0.2)
        raise SystemExit("FAILED: the webhook receiver got %d POSTs in %ds, not %d" % (len(self.received()), timeout, count))

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


class Console:
    """The browser on the console, with the waits and the screenshots the checks need."""

    def __init__(self, base, shots):
        options = webdriver.ChromeOptions()
        for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=1280,800", "--lang=en-US"):
            options.add_argument(argument)
        binary = shutil.which("chromium") or shutil.which("chromium-browser")
        if binary:
            options.binary_location = binary
        driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
        self.driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver_path))
        self.base = base
        self.shots = shots

    def open(self, fragment=""):
        self.driver.get(self.base + "/console/" + fragment)

    def go(self, fragment):
        self.driver.execute_script("location.hash = arguments[0]", fragment)

    def wait(self, condition, timeout=15):
        return WebDriverWait(self.driver, timeout).until(condition)

    def find(self, css, timeout=15):
        return self.wait(EC.presence_of_element_located((By.CSS_SELECTOR, css)), timeout)

    def text_in(self, css, text, timeout=15):
        try:
            return self.wait(EC.text_to_be_present_in_element((By.CSS_SELECTOR, css), text), timeout)
        except TimeoutException:
            shown = [e.text for e in self.driver.find_elements(By.CSS_SELECTOR, css)]
            raise SystemExit("FAILED: %r never showed %r; it shows %r" % (css, text, shown))

    def no_loading(self):
        self.wait(lambda d: not d.find_elements(By.CSS_SELECTOR, "main .loading"))

    def sign_in(self, user):
        self.open()
        self.find("#signin input[name=username]").send_keys(user)
        self.driver.find_element(By.CSS_SELECTOR, "#signin input[name=password]").send_keys(PASSWORD)
        self.driver.find_element(By.CSS_SELECTOR, "#signin button[type=submit]").click()
        self.wait(lambda d: d.find_element(By.ID, "who").text.startswith(user))

    def sign_out(self):
        self.driver.find_element(By.ID, "signout").click()
        self.find("#signin")

    def no_alert(self):
        try:
            text = self.driver.switch_to.alert.text
        except NoAlertPresentException:
            return True
        raise SystemExit("FAILED: an alert ran in the console: %r" % text)

    def show(self, css):
        """Scrolls the element into the middle of the page, for a screenshot."""
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", self.find(css))

    def accept_confirm(self):
        self.wait(EC.alert_is_present()).accept()

    def screenshot(self, name):
        """The page at each size, saved as NAME-WIDTHxHEIGHT.png; back to 1280x800 after."""
        for width, height in SIZES:
            # The page's own size (the viewport), not the window's.
            self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
            time.sleep(0.4)
            path = os.path.join(self.shots, "%s-%dx%d.png" % (name, width, height))
            self.driver.save_screenshot(path)
        self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        print("ok: screenshots of %s" % name)

    def webhook(self, name):
        """The row of webhook `name` on the integrations page, by column (see WEBHOOK_COLUMNS), or None."""
        try:
            for row in self.driver.find_elements(By.CSS_SELECTOR, "#webhooks tbody tr"):
                cells = [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
                if cells and cells[0] == name:
                    return dict(zip(WEBHOOK_COLUMNS, cells))
        except StaleElementReferenceException:
            pass
        return None

    def webhook_until(self, name, condition, reload, what, timeout=30):
        """Reloads the webhooks (`reload()`) until webhook `name`'s row meets `condition`; returns that row."""
        deadline, row = time.time() + timeout, None
        while time.time() < deadline:
            reload()
            self.no_loading()
            row = self.webhook(name)
            if row and condition(row):
                return row
            time.sleep(1)
        raise SystemExit("FAILED: the webhook %s never showed %s; its row: %r" % (name, what, row))

    def quit(self):
        self.driver.quit()


def main():
    if not os.path.exists(CAIRN):
        raise SystemExit("FAILED: no cairn binary at %s (build it, or pass its path)" % CAIRN)
    work = tempfile.mkdtemp(prefix="cairn-console-")
    shots = os.environ.get("CAIRN_CONSOLE_SCREENSHOTS") or os.path.join(work, "screens")
    os.makedirs(shots, exist_ok=True)
    process, console, receiver = None, None, None
    try:
        data = os.path.join(work, "data")

        def run_admin(*args):
            return live_server.run_admin(CAIRN, data, *args)

        print("== cairn admin: a project, an operator, a project admin, members with roles and claims")
        run_admin("add-project", "field")
        run_admin("add-user", "opal", "--password", PASSWORD, "--operator")
        for user, role in (("boss", "admin"), ("ana", "writer"), ("bob", "writer"), ("rita", "reader")):
            run_admin("add-user", user, "--password", PASSWORD)
            run_admin("grant", user, "--project", "field", "--role", role)
        schema_path = os.path.join(work, "schema.json")
        with open(schema_path, "w") as file:
            json.dump(SCHEMA, file)
        run_admin("set-schema", "--project", "field", schema_path)
        run_admin("set-claims", "bob", "--project", "field", '{"regions":["north"]}')

        process, base = serve(CAIRN, work, data)
        print("ok: cairn serve answers at " + base)
        tokens = {}
        for user in ("opal", "boss", "ana", "bob"):
            status, answer = call(base, "POST", "/v1/auth/login", body={"username": user, "password": PASSWORD})
            check(status == 200 and answer["user"]["operator"] == (user == "opal"),
                  "%s signs in; the answer says operator: %s" % (user, user == "opal"), True, answer)
            tokens[user] = answer["accessToken"]
        status, answer = call(base, "POST", PROJECT + "/batch", tokens["boss"], {"operations": [
            {"opId": "console-" + job, "collection": "jobs", "id": job, "op": "create",
             "data": {"title": title, "assignee": assignee, "region": region, "priority": priority}}
            for job, title, assignee, region, priority in JOBS]})
        check(status == 200 and all(r["status"] == "applied" for r in answer["results"]),
              "boss writes j1..j6 (j6 titled %s)" % XSS, 200, answer)
        status, registered = call(base, "POST", PROJECT + "/clients", tokens["bob"], {"device": "bob's tablet", "app": "field 2.1"})
        check(status == 201, "bob's tablet registers as a client", 201, status)
        device = {"Cairn-Client-ID": registered["clientId"]}
        status, _ = request(base, "GET", PROJECT + "/collections/jobs/changes", tokens["bob"], headers=device)
        check(status == 200, "bob's tablet syncs", 200, status)
        content = b"a site photo, as bytes"
        status, made = call(base, "POST", PROJECT + "/files", tokens["boss"],
                            {"name": "site-photo.jpg", "contentType": "image/jpeg", "size": len(content), "tags": ["site-7"]})
        request(base, "PUT", made["uploadUrl"], tokens["boss"], content, {"Content-Type": "application/octet-stream"})
        status, _ = call(base, "POST", PROJECT + "/files/%s/complete" % made["id"], tokens["boss"])
        check(status == 200, "boss uploads site-photo.jpg", 200, status)

        console = Console(base, shots)
        print("== who gets in")
        console.sign_in("ana")
        console.text_in("main", "No access")
        check(True, "ana (a writer) signs in and is told she has no access")
        for method, path in (("GET", PROJECT + "/members"), ("GET", PROJECT + "/clients"),
                             ("GET", PROJECT + "/collections/jobs/view-as?user=bob"), ("GET", "/v1/admin/projects"),
                             ("GET", PROJECT + "/explain?user=bob&collection=jobs&id=j1")):
            status, _ = call(base, method, path, tokens["ana"])
            check(status == 403, "the server refuses ana on %s %s too" % (method, path.split("?")[0]), 403, status)
        console.screenshot("refused")
        console.driver.find_element(By.CSS_SELECTOR, "main button").click()
        console.find("#signin")
        console.screenshot("sign-in")

        console.sign_in("boss")
        console.text_in("main", "project admin")
        options = [o.text for o in console.driver.find_elements(By.CSS_SELECTOR, "#project-picker option") if o.get_attribute("value")]
        check(options == ["field"], "boss (project admin of field) gets in and sees field", ["field"], options)
        kept = console.driver.execute_script("return [document.cookie, location.href, sessionStorage.getItem('cairn.console.session')]")
        check(kept[0] == "" and tokens["boss"][:8] not in kept[1] and "accessToken" in kept[2],
              "the token is in sessionStorage only: no cookie, not in the address", "no cookie, no token in URL", kept[:2])
        console.sign_out()
        status, _ = call(base, "GET", "/v1/auth/me", json.loads(kept[2])["accessToken"])
        check(status == 401, "signing out revoked the console's token", 401, status)

        console.sign_in("opal")
        console.text_in(".facts", "server operator")
        console.text_in("#backups", "backup")
        check(True, "opal (operator) gets in; the overview tells about backups: " + console.find("#backups").text)
        console.no_loading()
        console.screenshot("overview")

        print("== project")
        console.go("#/p/field/schema")
        console.text_in("main", "Set a new schema")
        console.text_in("main", "merge-fields")
        console.screenshot("project")
        wrong = json.loads(json.dumps(SCHEMA))
        wrong["collections"][0]["rules"]["read"] = {"field": "owner", "op": "eq", "value": {"param": "user.name"}}
        editor = console.find("#schema-form textarea")
        console.driver.execute_script("arguments[0].value = arguments[1]", editor, json.dumps(wrong, indent=2))
        console.driver.find_element(By.CSS_SELECTOR, "#schema-form button[type=submit]").click()
        console.text_in("#schema-outcome", "validation_failed")
        console.text_in("#schema-outcome", "jobs.rules.read")
        check(True, "a schema whose rule names an unknown field shows validation_failed at jobs.rules.read")
        console.show("#schema-outcome")
        console.screenshot("project-error")

        print("== data")
        console.go("#/p/field/data")
        console.text_in("#record-count", "records")
        Select(console.find("#filter-field")).select_by_visible_text("region")
        Select(console.find("#filter-op")).select_by_visible_text("eq")
        console.find("#filter-value").send_keys("north")
        console.find("#apply").click()
        console.text_in("#record-count", "3 of 3")
        rows = console.driver.find_elements(By.CSS_SELECTOR, "#records tbody tr")
        shown = sorted(r.find_element(By.CSS_SELECTOR, "td code").text for r in rows)
        check(shown == ["j1", "j4", "j6"], "region eq north lists j1, j4 and j6", ["j1", "j4", "j6"], shown)
        cells = [c.text for c in console.driver.find_elements(By.CSS_SELECTOR, "#records td")]
        check(XSS in cells and not console.driver.find_elements(By.CSS_SELECTOR, "#records img"),
              "j6's title shows as the text %s, and no img element was made" % XSS, XSS, cells)
        console.no_alert()
        check(True, "no alert ran")
        rows[0].click()
        console.text_in("#record", "Version")
        console.text_in("#record-fields", "version 1 (the last change)")
        check(True, "j1 opens with its fields, each with the version that last changed it")
        Select(console.find("#explain-user")).select_by_visible_text("bob")
        console.driver.find_element(By.CSS_SELECTOR, "#record form button[type=submit]").click()
        console.text_in("#explain", "Read")
        explained = console.find("#explain").text
        check("allowed" in explained and "read.or[1]" in explained,
              "j1's explain for bob shows read allowed by read.or[1] (his north claim)", "allowed, read.or[1]", explained)
        console.show("#explain")
        console.screenshot("data-record")
        row = [r for r in console.driver.find_elements(By.CSS_SELECTOR, "#records tbody tr") if XSS in r.text][0]
        row.click()
        console.text_in("#record", XSS)
        console.no_alert()
        check(not console.driver.find_elements(By.CSS_SELECTOR, "#record img"), "j6 opened shows its title as text too")

        print("== view as user")
        for user in ("bob", "ana", "rita"):
            console.go("#/p/field/data")
            console.text_in("#record-count", "records")
            Select(console.find("#filter-field")).select_by_value("")
            Select(console.find("#view-as")).select_by_value(user)
            console.find("#apply").click()
            console.text_in("#view-as-banner", user)
            console.text_in("#record-count", "devices receive")
            shown = {r.find_element(By.CSS_SELECTOR, "td code").text for r in console.driver.find_elements(By.CSS_SELECTOR, "#records tbody tr")}
            status, answer = call(base, "POST", "/v1/auth/login", body={"username": user, "password": PASSWORD})
            pulled = pull_ids(base, answer["accessToken"])
            check(shown == pulled, "view as %s lists exactly what %s pulls over HTTP: %s" % (user, user, sorted(pulled)),
                  sorted(pulled), sorted(shown))
            if user == "bob":
                console.screenshot("data-view-as")

        print("== members, files, activity")
        console.go("#/p/field/members")
        console.text_in("main table", "rita")
        console.screenshot("members")
        console.go("#/p/field/files")
        console.text_in("#files", "site-photo.jpg")
        console.find("#files tbody tr").click()
        console.text_in("#file", "SHA-256")
        console.find("#file button").click()
        console.text_in("#files-status", "Downloaded site-photo.jpg")
        check(True, "site-photo.jpg opens with its metadata and downloads (fetch with the token, then a blob)")
        console.screenshot("files")
        console.go("#/p/field/activity")
        console.text_in("#stream-status", "Listening")
        call(base, "POST", PROJECT + "/batch", tokens["boss"], {"operations": [
            {"opId": "console-live", "collection": "notes", "id": "n1", "op": "create", "data": {"title": "live"}}]})
        console.text_in("#notices", "notes")
        check(True, "a change written while the activity page is open appears in its live list")
        time.sleep(6)
        console.screenshot("activity")

        print("== devices: revoke a device's user")
        console.go("#/p/field/devices")
        console.text_in("#devices", "bob's tablet")
        console.screenshot("devices")
        console.find("#devices button[data-user=bob]").click()
        console.accept_confirm()
        console.text_in("#devices-status", "done")
        status, answer = request(base, "GET", PROJECT + "/collections/jobs/changes", tokens["bob"], headers=device)
        check(status == 401, "bob's tablet's next sync is refused (401) after the console revoked bob", 401, status)
        console.no_alert()

        print("== integrations: service keys")
        console.sign_out()
        console.sign_in("boss")
        console.go("#/p/field/integrations")
        console.text_in("#service-keys", "No service keys yet")
        console.text_in("#webhooks", "No webhooks yet")
        check(True, "boss (project admin) opens Integrations: no service keys, no webhooks")
        console.find("#add-service-key input[name=name]").send_keys("erp")
        Select(console.find("#add-service-key select[name=role]")).select_by_value("writer")
        console.find("#add-service-key button[type=submit]").click()
        console.text_in("#service-keys-status", "done")
        console.text_in("#new-key", "not shown again")
        key = console.find("#new-key-text").text
        check(key.startswith("cairn_sk_") and len(key) == len("cairn_sk_") + 43,
              "making the service key erp shows its key once, in a box saying it is not shown again",
              "cairn_sk_ and 43 characters", key)
        console.text_in("#service-keys", "erp")
        listed = console.find("#service-keys").text
        check("writer" in listed and "never" in listed and key not in listed,
              "the list shows erp as writer, never used, without the key", "erp, writer, never, no key", listed)
        status, _ = call(base, "GET", PROJECT + "/schema", key)
        check(status == 200, "the key signs a request in", 200, status)
        console.show("#new-key")
        console.screenshot("integrations-key")
        console.find("#add-service-key input[name=name]").send_keys("erp")
        console.find("#add-service-key button[type=submit]").click()
        console.text_in("#service-keys-status", "already_exists")
        check(True, "making erp again shows the server's already_exists")
        console.driver.refresh()
        console.no_loading()
        console.text_in("#service-keys", "erp")
        shown = console.driver.page_source
        check(key not in shown and not console.driver.find_elements(By.CSS_SELECTOR, "#new-key-text"),
              "after a reload, erp is listed and its key is nowhere on the page", "no key", "the key" if key in shown else "")
        console.find("#service-keys button[data-name=erp]").click()
        console.accept_confirm()
        console.text_in("#service-keys-status", "done")
        console.text_in("#service-keys", "No service keys yet")
        status, _ = call(base, "GET", PROJECT + "/schema", key)
        check(status == 401, "revoking erp in the console: the key is refused (401)", 401, status)

        print("== integrations: webhooks")
        receiver = Receiver()
        form = console.find("#add-webhook")
        form.find_element(By.CSS_SELECTOR, "input[name=name]").send_keys("erp_hook")
        form.find_element(By.CSS_SELECTOR, "input[name=url]").send_keys(receiver.url)
        form.find_element(By.CSS_SELECTOR, "input[name=secret]").send_keys("too short")
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        console.text_in("#webhooks-status", "at least 16 bytes")
        check(True, "a secret under 16 bytes is refused before it is sent")
        secret_input = form.find_element(By.CSS_SELECTOR, "input[name=secret]")
        secret_input.clear()
        secret_input.send_keys(WEBHOOK_SECRET)
        console.find("#webhook-collection-jobs").click()
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        console.text_in("#webhooks-status", "done")
        console.text_in("#webhooks", "erp_hook")
        row = console.webhook("erp_hook")
        check(row and row["url"] == receiver.url and row["collections"] == "jobs" and row["status"].startswith("ok")
              and row["delivered"] == "0", "the webhook erp_hook is listed: its URL, jobs only, status ok, 0 delivered",
              "ok, jobs, 0", row)
        status, answer = call(base, "POST", PROJECT + "/batch", tokens["boss"], {"operations": [
            {"opId": "console-hook-1", "collection": "jobs", "id": "j7", "op": "create",
             "data": {"title": "Delivered to the ERP", "assignee": "ana", "region": "west", "priority": 1}}]})
        check(status == 200 and answer["results"][0]["status"] == "applied", "boss writes j7 over HTTP", 200, answer)
        headers, body = receiver.wait_for(1)[0]
        expected = "sha256=" + hmac.new(WEBHOOK_SECRET.encode(), body, hashlib.sha256).hexdigest()
        check(headers.get("cairn-signature") == expected,
              "the receiver gets a POST whose Cairn-Signature is sha256=HMAC-SHA256(secret, body)",
              expected, headers.get("cairn-signature"))
        delivered = json.loads(body)
        check(delivered["project"] == "field" and delivered["webhook"] == "erp_hook"
              and [(d["collection"], d["id"], d["op"]) for d in delivered["deliveries"]] == [("jobs", "j7", "upsert")],
              "it carries j7's change (%s)" % headers.get("cairn-delivery"), "jobs/j7 upsert", delivered)
        row = console.webhook_until("erp_hook", lambda r: int(r["delivered"]) >= 1, console.driver.refresh,
                                    "a DELIVERED count of 1 or more after a reload")
        check(row["status"].startswith("ok") and row["behind"] == "0",
              "after a reload the page shows erp_hook delivered %s, 0 behind, ok" % row["delivered"], "ok, 0 behind", row)

        receiver.status = 500
        count = len(receiver.received())
        status, answer = call(base, "POST", PROJECT + "/batch", tokens["boss"], {"operations": [
            {"opId": "console-hook-2", "collection": "jobs", "id": "j8", "op": "create",
             "data": {"title": "Refused by the ERP", "assignee": "ana", "region": "west", "priority": 1}}]})
        check(status == 200, "boss writes j8 while the receiver answers 500", 200, answer)
        receiver.wait_for(count + 1)
        refresh = lambda: console.find("#integrations-refresh").click()
        row = console.webhook_until("erp_hook", lambda r: r["status"].startswith("retrying"), refresh, "retrying")
        check(int(row["failures"]) >= 1 and "500" in row["last error"] and row["next attempt"] != "—",
              "the page shows erp_hook retrying, %s failure(s), its last error and next attempt" % row["failures"],
              "failures, a 500, a next attempt", row)
        console.show("#webhooks")
        console.screenshot("integrations")
        console.find("#webhooks button[data-name=erp_hook]").click()
        console.accept_confirm()
        console.text_in("#webhooks-status", "done")
        console.text_in("#webhooks", "No webhooks yet")
        check(True, "removing erp_hook in the console leaves no webhook")
        console.no_alert()
        print("ok: the console checks passed; screenshots in " + shots)
    finally:
        try:
            if console:
                console.quit()
        finally:
            try:
                stop(process)
            finally:
                if receiver:
                    receiver.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
