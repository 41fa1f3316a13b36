"""The server's `where` against a plain-Python evaluator of PROTOCOL.md's filter semantics, on random records and
random filters, from outside with Python's standard library. Usage: outside_where.py BASE_URL TOKEN [--seed N]

Puts a `probes` collection into the project's schema over HTTP (an additive change; run.sh's schema.json stays as it
is), replaces its live records with a few hundred random ones, then pulls a snapshot for each random filter, page by
page, and compares the ids with the evaluator's. Also sends deliberately invalid filters and expects
`422 validation_failed`. Any disagreement is printed with the filter, the record, both answers and the conditions of
the filter that disagree on that record; the exit status is then 1.

Finding on `contains` (and `eq` on a json field) with booleans and numbers: the server compiles a boolean filter value
to the SQL integer 1/0, and SQLite's json_each/json_extract read a JSON `true`/`false` as 1/0 too, so
`contains true` matches `[1]` and `[1.0]`, and `contains 1` matches `[true]`. PROTOCOL.md says the array holds "an
element equal to the value" and keeps booleans apart from numbers (they support eq, ne and in only), so the evaluator
below does not treat `true` as equal to `1`; this check reports the difference rather than bending to it.
"""
import argparse
import datetime
import json
import random
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from fractions import Fraction

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("base")
parser.add_argument("token")
parser.add_argument("--seed", type=int, default=20261122)
parser.add_argument("--records", type=int, default=400)
parser.add_argument("--filters", type=int, default=400)
arguments = parser.parse_args()
base, token = arguments.base, arguments.token

rng = random.Random(arguments.seed)
wire = random.Random(arguments.seed + 1)  # how requests are spelled (escaped or raw UTF-8): apart from the data
COLLECTION = "probes"
FIELDS = {"label": "string", "count": "integer", "score": "number", "flag": "boolean", "at": "datetime", "tags": "json"}
CHANGES = f"/v1/projects/field/collections/{COLLECTION}/changes"


def fail(message):
    print("outside where: FAILED: " + message)
    sys.exit(1)


def call(method, path, body=None, query=None, ascii_only=True):
    url = base + path + ("?" + urllib.parse.urlencode(query) if query else "")
    data = json.dumps(body, ensure_ascii=ascii_only).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={
        "Authorization": "Bearer " + token, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def text(value):
    return json.dumps(value, ensure_ascii=False)


# --- The collection -------------------------------------------------------------------------------------------------

def ensure_collection():
    """Adds `probes` to the schema with PUT (additive), or checks the one already there has the fields needed."""
    status, schema = call("GET", "/v1/projects/field/schema")
    if status != 200:
        fail(f"GET schema answered {status}: {schema}")
    existing = next((c for c in schema["collections"] if c["name"] == COLLECTION), None)
    if existing is not None:
        types = {field["name"]: field["type"] for field in existing["fields"]}
        if any(types.get(name) != field_type for name, field_type in FIELDS.items()):
            fail(f"the schema already has a {COLLECTION} collection with other fields: {existing}")
        return
    schema["collections"].append({"name": COLLECTION, "fields": [{"name": n, "type": t} for n, t in FIELDS.items()]})
    schema.pop("version", None)
    status, answer = call("PUT", "/v1/projects/field/schema", schema)
    if status != 200:
        fail(f"PUT schema with {COLLECTION} answered {status}: {answer}")


def pull(where=None, limit=1000):
    """Every live record of a snapshot (no `since`), following `cursor` while `hasMore`: a list of changes."""
    changes, seen, since = [], set(), None
    while True:
        query = {"limit": str(limit)}
        if where is not None:
            query["where"] = json.dumps(where, ensure_ascii=wire.random() < 0.5)
        if since is not None:
            query["since"] = since
        status, page = call("GET", CHANGES, query=query)
        if status != 200:
            return status, page
        for change in page["changes"]:
            if change.get("deleted") or change.get("gone") or "data" not in change:
                fail(f"a snapshot of {COLLECTION} (nothing else writes to it) handed out {change} for where={text(where)}")
            if change["id"] in seen:
                fail(f"id {change['id']} came twice while paging where={text(where)} with limit={limit}")
            seen.add(change["id"])
            changes.append(change)
        if not page["hasMore"]:
            return 200, changes
        since = page["cursor"]


def batch(operations):
    for start in range(0, len(operations), 1000):
        chunk = operations[start:start + 1000]
        status, answer = call("POST", "/v1/projects/field/batch", {"operations": chunk}, ascii_only=wire.random() < 0.5)
        if status != 200:
            fail(f"a batch of {len(chunk)} operations answered {status}: {answer}")
        for operation, result in zip(chunk, answer["results"]):
            if result["status"] != "applied":
                fail(f"{operation['op']} {operation['id']} {text(operation.get('data'))} was not applied: {result}")


# --- Random values --------------------------------------------------------------------------------------------------

STRINGS = [
    "", "a", "A", "ab", "AB", "aB", "abc", "Abc", "MiXeD case", "mixed CASE", "milk", "Milk", "MILK%", "buy milk",
    "%", "_", "%%", "a%b", "a_b", "a%", "_b", "100%", "50_50", "x_%y", "é", "É", "e\u0301", "café", "CAFÉ", "Café",
    "naïve", "NAÏVE", "Straße", "STRASSE", "ß", "İ", "ı", "i", "I", "ǅ", "Ω", "ω", "日本", "日本語", "中文", "한국어",
    "😀", "😀😀", "a😀b", "👍🏽", "🇫🇷", "\U0010ffff", "\uffff", "\u00a0", " ", "  a", "a ", "tab\there", "line\nbreak",
    'quote"d', "back\\slash", "+plus+", "a+b c", "&=?#", "[1]", "true", "1", "1.0", "null", "Z", "z", "~", "\x7f",
]
INSTANT_BASE = Fraction(int(datetime.datetime(2026, 3, 29, 1, 0, tzinfo=datetime.timezone.utc).timestamp()))
# Offsets as (sign, hours, minutes); the ones past 14 hours are valid RFC 3339 (time-hour is 00-23) but rarer.
OFFSETS = [(0, 0, 0)] * 4 + [(1, 0, 0), (-1, 0, 0), (1, 2, 0), (-1, 5, 30), (1, 5, 45), (1, 9, 0), (-1, 8, 0),
                            (1, 14, 0), (-1, 12, 0), (1, 0, 30), (-1, 3, 30)] * 2 + [(1, 15, 0), (-1, 23, 59)]


def make_instants():
    """Instants near each other (seconds since the epoch, exact): whole seconds, milliseconds, and a few pairs that
    differ by less than a millisecond."""
    instants = set()
    for _ in range(40):
        step = rng.choice([1, 60, 900])
        seconds = INSTANT_BASE + rng.randint(-3 * 3600, 3 * 3600) // step * step
        instants.add(seconds + rng.choice([0, 0, Fraction(rng.randint(0, 999), 1000), Fraction(rng.randint(0, 9), 10)]))
    for instant in sorted(instants)[::7]:
        instants.add(instant + Fraction(rng.choice([1, 5, 400, 600]), 1_000_000))
    return sorted(instants)


def spell_instant(instant):
    """An RFC 3339 spelling of `instant` with a random offset, separator and number of fractional digits."""
    sign, hours, minutes = rng.choice(OFFSETS)
    offset = sign * (hours * 3600 + minutes * 60)
    local = instant + offset
    whole = local.numerator // local.denominator
    fraction = local - whole
    moment = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=whole)
    digits = next(d for d in range(0, 10) if (fraction * 10 ** d).denominator == 1)
    digits = max(digits, rng.choice([0, 0, 1, 3, 6, 9])) if digits or rng.random() < 0.3 else 0
    separator = rng.choice("TTTTTTTTt ")
    out = moment.strftime(f"%Y-%m-%d{separator}%H:%M:%S")
    if digits:
        out += "." + str(int(fraction * 10 ** digits)).rjust(digits, "0")
    if sign == 0:
        return out + rng.choice("ZZZZz")
    return out + f"{'+' if sign > 0 else '-'}{hours:02d}:{minutes:02d}"


INTEGERS = [0, 1, 2, 3, -1, -2, 7, 10, 42, 100, -100, 2 ** 31, 2 ** 53, 2 ** 53 + 1, -(2 ** 53) - 1, 2 ** 63 - 1, -(2 ** 63)]
INTEGRAL_FLOATS = [0.0, -0.0, 1.0, 2.0, -2.0, 10.0, 1e15, 1e20, -1e20, 9007199254740992.0, 9.223372036854776e18]
FRACTIONS = [0.5, 2.5, -2.5, 0.1, 0.2, 0.30000000000000004, 0.3, 1 / 3, -1.25, 1e-7, 123456.789, 2.000001, 1.9999999,
             3.141592653589793, -0.001, 5e-324, 1.7976931348623157e308]
NUMBERS = INTEGERS + INTEGRAL_FLOATS + FRACTIONS


def random_string():
    if rng.random() < 0.7:
        return rng.choice(STRINGS)
    return "".join(rng.choice("aAbB%_é😀日 ") for _ in range(rng.randint(1, 5)))


def random_scalar():
    return rng.choice([rng.choice(INTEGERS[:12]), rng.choice([1.0, 2.0, 2.5, 0.1, -0.0]), rng.choice([True, False]),
                       rng.choice(["a", "A", "1", "true", "😀", "é", "", "x y"])])


def random_tags():
    roll = rng.random()
    if roll < 0.75:
        tags = [random_scalar() for _ in range(rng.randint(0, 5))]
        if rng.random() < 0.1:
            tags.append(None)
        if rng.random() < 0.1:
            tags.append(rng.choice([[1], ["a"], [True], {"a": 1}]))
        return tags
    if roll < 0.9:
        return random_scalar()
    return rng.choice([{"a": 1}, {}, {"0": True}])


def maybe(make, absent=0.15, null=0.1):
    """A field's value: missing (Ellipsis), null, or `make()`."""
    roll = rng.random()
    return ... if roll < absent else None if roll < absent + null else make()


def make_records(instants):
    records = {}
    prefixes = ["a", "B", "_", "z.", "M:", "0-", "Aa", "b_", "Z", "m"]
    for n in range(arguments.records):
        record_id = f"{rng.choice(prefixes)}{n:03d}{rng.choice(['', '.x', '-Y', ':q', '_'])}"
        values = {
            "label": maybe(random_string),
            "count": maybe(lambda: rng.choice(INTEGERS + INTEGERS + INTEGRAL_FLOATS)),
            "score": maybe(lambda: rng.choice(NUMBERS)),
            "flag": maybe(lambda: rng.choice([True, False])),
            "at": maybe(lambda: spell_instant(rng.choice(instants))),
            "tags": maybe(random_tags),
        }
        data = {name: value for name, value in values.items() if value is not ...}
        if rng.random() < 0.2:
            data["extra"] = rng.choice([1, "x", None, [1]])  # undeclared: it syncs but is not filterable
        records[record_id] = data
    return records


# --- The evaluator (PROTOCOL.md, Filters) ---------------------------------------------------------------------------

DATETIME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$")


def instant_of(spelled):
    """The exact instant (seconds since the epoch, a Fraction) an RFC 3339 date-time denotes; offsets honoured."""
    match = DATETIME.match(spelled)
    if not match:
        raise ValueError(f"not an RFC 3339 date-time: {spelled!r}")
    year, month, day, hour, minute, second, fraction, _, sign, offset_hours, offset_minutes = match.groups()
    days = datetime.date(int(year), int(month), int(day)).toordinal() - datetime.date(1970, 1, 1).toordinal()
    seconds = Fraction(days * 86400 + int(hour) * 3600 + int(minute) * 60 + int(second))
    if fraction:
        seconds += Fraction(int(fraction), 10 ** len(fraction))
    if sign:
        seconds -= (1 if sign == "+" else -1) * (int(offset_hours) * 3600 + int(offset_minutes) * 60)
    return seconds


def kind(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"  # before int: in Python True == 1, in JSON and in PROTOCOL.md they differ
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}[type(value)]


def same_json(left, right):
    """Deep JSON equality that keeps booleans apart from numbers (1 == 1.0, true != 1)."""
    if kind(left) != kind(right):
        return False
    if isinstance(left, list):
        return len(left) == len(right) and all(same_json(a, b) for a, b in zip(left, right))
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(same_json(left[k], right[k]) for k in left)
    return left == right


def equal(field_type, left, right):
    """JSON equality of two non-null values: numbers as numbers (exactly, 1 == 1.0), datetimes by instant."""
    if kind(left) != kind(right):
        return False
    if field_type == "datetime":
        return instant_of(left) == instant_of(right)
    return left == right


def less(field_type, left, right):
    """-1, 0 or 1: numbers as numbers, strings by code point (Python compares str by code point), datetimes by instant."""
    if field_type == "datetime":
        left, right = instant_of(left), instant_of(right)
    return (left > right) - (left < right)


def like(value, pattern):
    """`%` any run, `_` exactly one character (code point), ASCII letters in any case, others exact, no escape."""
    parts = []
    for char in pattern:
        if char == "%":
            parts.append(".*")
        elif char == "_":
            parts.append(".")
        elif char.isascii() and char.isalpha():
            parts.append(f"[{char.lower()}{char.upper()}]")
        else:
            parts.append(re.escape(char))
    return re.fullmatch("".join(parts), value, re.DOTALL) is not None


def field_value(record_id, data, field):
    return record_id if field == "id" else data.get(field)  # missing and null are the same


def matches(where, record_id, data):
    if "not" in where:
        return not matches(where["not"], record_id, data)
    if "and" in where:
        return all(matches(child, record_id, data) for child in where["and"])
    if "or" in where:
        return any(matches(child, record_id, data) for child in where["or"])
    field, op, target = where["field"], where["op"], where.get("value")
    field_type = "string" if field == "id" else FIELDS[field]
    value = field_value(record_id, data, field)
    if op == "exists":
        return (value is not None) == target
    if op in ("eq", "ne"):
        same = value is None if target is None else value is not None and equal(field_type, value, target)
        return same if op == "eq" else not same
    if op == "in":
        return any(matches({"field": field, "op": "eq", "value": each}, record_id, data) for each in target)
    if op in ("lt", "lte", "gt", "gte"):
        if value is None:
            return False
        order = less(field_type, value, target)
        return {"lt": order < 0, "lte": order <= 0, "gt": order > 0, "gte": order >= 0}[op]
    if op == "like":
        return value is not None and like(value, target)
    if op == "contains":
        return isinstance(value, list) and any(kind(element) not in ("null", "array", "object")
                                               and equal("json", element, target) for element in value)
    raise ValueError(f"unknown op {op}")


# --- Random filters -------------------------------------------------------------------------------------------------

def random_like_pattern(records):
    source = rng.choice([random_string(), rng.choice(records).get("label") if rng.random() < 0.5 else "abc"])
    source = source if isinstance(source, str) else "a"
    chars = []
    for char in source:
        roll = rng.random()
        chars.append("_" if roll < 0.15 else "%" if roll < 0.22 else char.swapcase() if roll < 0.45 and char.isascii() else char)
    pattern = "".join(chars)
    if rng.random() < 0.4:
        pattern = "%" + pattern
    if rng.random() < 0.4:
        pattern += "%"
    return pattern


def value_for(field, records, ids, instants):
    """A value that fits `field` (the protocol's type rules), often one the records hold."""
    data = rng.choice(records)
    if field == "id":
        return rng.choice(ids + ["a", "B", "Z", "_", "m", "0", "a1", "z.", "M:", "~"])
    field_type = FIELDS[field]
    held = data.get(field)
    if field_type == "string":
        return held if isinstance(held, str) and rng.random() < 0.5 else random_string()
    if field_type in ("integer", "number"):
        return held if kind(held) == "number" and rng.random() < 0.5 else rng.choice(NUMBERS)
    if field_type == "boolean":
        return rng.choice([True, False])
    if field_type == "datetime":
        if isinstance(held, str) and rng.random() < 0.3:
            return held
        return spell_instant(rng.choice(instants) if rng.random() < 0.8 else INSTANT_BASE + rng.randint(-20000, 20000))
    # json: a scalar; sometimes the compact JSON text of an array a record holds (a string is never equal to an array)
    if isinstance(held, list) and rng.random() < 0.15:
        return json.dumps(held, separators=(",", ":"), ensure_ascii=False)
    if isinstance(held, list) and held and kind(element := rng.choice(held)) not in ("null", "array", "object"):
        return element
    return random_scalar()


def random_condition(records, ids, instants):
    field = rng.choice(list(FIELDS) + ["id"])
    field_type = "string" if field == "id" else FIELDS[field]
    ops = {"string": ["eq", "ne", "lt", "lte", "gt", "gte", "in", "like", "exists"],
           "integer": ["eq", "ne", "lt", "lte", "gt", "gte", "in", "exists"],
           "number": ["eq", "ne", "lt", "lte", "gt", "gte", "in", "exists"],
           "boolean": ["eq", "ne", "in", "exists"],
           "datetime": ["eq", "ne", "lt", "lte", "gt", "gte", "in", "exists"],
           # Ordering on a json field is left out: PROTOCOL.md does not define an order across JSON kinds.
           "json": ["contains", "contains", "contains", "eq", "ne", "in", "exists"]}[field_type]
    op = rng.choice(ops)
    if op == "exists":
        value = rng.choice([True, False])
    elif op == "like":
        value = random_like_pattern(records)
    elif op == "in":
        value = [None if rng.random() < 0.1 else value_for(field, records, ids, instants) for _ in range(rng.choice([0, 1, 2, 3, 5]))]
    elif op in ("eq", "ne") and rng.random() < 0.12:
        value = None
    else:
        value = value_for(field, records, ids, instants)
    return {"field": field, "op": op, "value": value}


def random_filter(records, ids, instants, depth=1):
    """A condition, or an and/or of up to 4 filters, nested up to depth 3 (empty and/or included)."""
    if depth < 3 and rng.random() < 0.12:
        return {"not": random_filter(records, ids, instants, depth + 1)}
    if depth < 3 and rng.random() < (0.55 if depth == 1 else 0.35):
        return {rng.choice(["and", "or"]): [random_filter(records, ids, instants, depth + 1) for _ in range(rng.choice([0, 1, 2, 2, 3, 4]))]}
    return random_condition(records, ids, instants)


def leaves(where):
    if "not" in where:
        yield from leaves(where["not"])
    elif "and" in where or "or" in where:
        for child in where.get("and", where.get("or")):
            yield from leaves(child)
    else:
        yield where


# --- Invalid filters ------------------------------------------------------------------------------------------------

def nested(levels):
    where = {"field": "flag", "op": "eq", "value": True}
    for _ in range(levels):
        where = {"and": [where]}
    return where


INVALID = [  # (filter, the details.field the answer names)
    ({"field": "extra", "op": "eq", "value": 1}, "extra"),                     # not a schema field
    ({"field": "nope", "op": "exists", "value": True}, "nope"),
    ({"field": "count", "op": "eq", "value": "2"}, "count"),                   # a string against an integer
    ({"field": "score", "op": "lt", "value": True}, "score"),
    ({"field": "label", "op": "eq", "value": 3}, "label"),
    ({"field": "flag", "op": "eq", "value": 1}, "flag"),
    ({"field": "flag", "op": "lt", "value": True}, "flag"),                    # booleans: eq, ne, in only
    ({"field": "flag", "op": "gte", "value": False}, "flag"),
    ({"field": "at", "op": "lt", "value": "yesterday"}, "at"),                 # not RFC 3339
    ({"field": "at", "op": "eq", "value": "2026-02-30T00:00:00Z"}, "at"),
    ({"field": "at", "op": "gt", "value": 1774746000}, "at"),
    ({"field": "count", "op": "like", "value": "1%"}, "count"),                # like on a non-string field
    ({"field": "tags", "op": "like", "value": "%"}, "tags"),
    ({"field": "label", "op": "contains", "value": "a"}, "label"),             # contains on a non-array field
    ({"field": "id", "op": "contains", "value": "a"}, "id"),
    ({"field": "id", "op": "eq", "value": 7}, "id"),
    ({"field": "count", "op": "in", "value": 1}, "count"),                     # in takes an array
    ({"field": "count", "op": "in", "value": [1, "2"]}, "count"),
    ({"field": "label", "op": "in", "value": ["x"] * 1001}, "label"),         # at most 1000 values
    ({"field": "flag", "op": "exists", "value": "yes"}, "flag"),               # exists takes true or false
    ({"and": [{"field": "label", "op": "eq", "value": "a"}, {"field": "count", "op": "gt", "value": "a"}]}, "count"),
    ({"field": "label", "op": "between", "value": "a"}, "where"),              # unknown op
    ({"and": [], "or": []}, "where"),                                          # not a filter shape
    ({"field": "label", "value": "a"}, "where"),
    (nested(40), "where"),                                                     # nested deeper than 32 levels
    ({"field": "label", "op": "eq", "value": "a\x00b"}, "label"),             # strings cannot hold U+0000
    ({"not": {"field": "label", "op": "like", "value": 1}}, "label"),
]


def check_invalid():
    for where, field in INVALID:
        status, answer = call("GET", CHANGES, query={"where": json.dumps(where)})
        error = (answer or {}).get("error", {}) if isinstance(answer, dict) else {}
        if status != 422 or error.get("code") != "validation_failed":
            fail(f"where={text(where)[:200]} answered {status} {answer}; PROTOCOL.md says 422 validation_failed")
        if error.get("details", {}).get("field") != field:
            fail(f"where={text(where)[:200]} answered 422 naming {error.get('details')}, not field {field!r}")
    return len(INVALID)


# --- The run --------------------------------------------------------------------------------------------------------

SHOWN = 6  # disagreeing filters printed in full; the rest only feed the grouped summary
UNEXPLAINED = "nothing in common with the cases above (look at these first)"


def cause(leaf, held):
    """What a disagreeing condition has in common with others, from the facts of the case (not the server's code)."""
    targets = leaf["value"] if leaf["op"] == "in" else [leaf["value"]]
    values = [held] + [t for t in targets if t is not None]
    if leaf["field"] == "at":
        spelled = [v for v in values if isinstance(v, str)]
        if any(v[10] == "t" for v in spelled):
            return "a datetime spelled with a lowercase t (RFC 3339 allows t and z)"
        if any(v[-6] in "+-" and int(v[-5:-3]) > 14 for v in spelled):
            return "a datetime with an offset past 14 hours (RFC 3339 allows up to 23:59)"
        if held is not None and any(0 < abs(instant_of(held) - instant_of(t)) < Fraction(1, 1000) for t in spelled[1:]):
            return "datetimes less than a millisecond apart"
    if leaf["field"] == "tags":
        scalars = (held if isinstance(held, list) else [held]) + targets
        if any(kind(v) == "boolean" for v in scalars) and any(kind(v) == "number" for v in scalars):
            return "a boolean and a number in a json field (true against 1, false against 0)"
        if isinstance(held, (list, dict)) and any(kind(t) == "string" for t in targets):
            return "a string against a json field holding an array or object"
    if any(isinstance(v, str) and "\x00" in v for v in values):
        return "a string holding U+0000"
    return UNEXPLAINED


def server_matches(where, record_id):
    """The server's answer for one record: the filter anded with `id eq record_id`."""
    status, changes = pull({"and": [{"field": "id", "op": "eq", "value": record_id}, where]})
    if status != 200:
        fail(f"where={text(where)} for {record_id} answered {status}: {changes}")
    return bool(changes)


def main():
    started = time.monotonic()
    print(f"outside where: seed {arguments.seed} (rerun with --seed {arguments.seed})")
    ensure_collection()
    status, old = pull()
    if status != 200:
        fail(f"a snapshot of {COLLECTION} answered {status}: {old}")
    run = uuid.uuid4().hex[:12]  # opIds only: ids and data come from the seed
    batch([{"opId": f"where-{run}-del-{n}", "collection": COLLECTION, "id": change["id"], "op": "delete"} for n, change in enumerate(old)])

    instants = make_instants()
    records = make_records(instants)
    batch([{"opId": f"where-{run}-{n}", "collection": COLLECTION, "id": record_id, "op": "create", "data": data}
           for n, (record_id, data) in enumerate(records.items())])
    # Records are evaluated as sent (missing and null fields as they are), and what comes back must be the same JSON,
    # except that the server leaves out top-level null fields (missing and null are the same, PROTOCOL.md says).
    status, stored = pull(limit=rng.choice([37, 1000]))
    if status != 200 or sorted(c["id"] for c in stored) != sorted(records):
        fail(f"the unfiltered snapshot does not hold exactly the {len(records)} records sent: {status}")
    for change in stored:
        sent = records[change["id"]]
        if not same_json(change["data"], {k: v for k, v in sent.items() if v is not None}):
            fail(f"record {change['id']} came back as {text(change['data'])}, sent as {text(sent)}")

    # Strings cannot hold U+0000 (PROTOCOL.md): a record holding one anywhere is rejected, and nothing is stored.
    status, answer = call("POST", "/v1/projects/field/batch", {"operations": [
        {"opId": f"where-{run}-nul", "collection": COLLECTION, "id": "nul", "op": "create", "data": {"extra": {"k": "a\x00b"}}}]})
    result = (answer or {}).get("results", [{}])[0] if status == 200 else {}
    if result.get("status") != "rejected" or result.get("error", {}).get("code") != "validation_failed":
        fail(f"a record holding U+0000 answered {status} {answer}; PROTOCOL.md says rejected, validation_failed")

    data_list, ids = list(records.values()), list(records)
    disagreements, findings, partial = [], {}, 0
    for _ in range(arguments.filters):
        where = random_filter(data_list, ids, instants)
        limit = rng.choice([1000, 1000, 1000, 100, 29, 7])
        status, changes = pull(where, limit)
        if status != 200:
            fail(f"the valid filter where={text(where)} answered {status}: {changes}")
        served = {change["id"] for change in changes}
        expected = {record_id for record_id, data in records.items() if matches(where, record_id, data)}
        partial += 0 < len(expected) < len(records)
        if served != expected:
            disagreements.append((where, served, expected))

    for number, (where, served, expected) in enumerate(disagreements):
        differing = sorted(served ^ expected)
        shown = number < SHOWN
        if shown:
            print(f"\nDISAGREEMENT on where={text(where)}")
            print(f"  server {len(served)} ids, protocol {len(expected)}; {len(differing)} differ")
        for record_id in differing[:3]:
            data = records[record_id]
            if shown:
                print(f"  record {record_id} {text(data)}: server {'matches' if record_id in served else 'does not match'}, "
                      f"protocol {'matches' if record_id in expected else 'does not match'}")
            for leaf in leaves(where):
                ours, theirs = matches(leaf, record_id, data), server_matches(leaf, record_id)
                if ours != theirs:
                    held = field_value(record_id, data, leaf["field"])
                    line = f"{text(leaf)} on {leaf['field']}={text(held)} (record {record_id}): server {theirs}, protocol {ours}"
                    findings.setdefault(cause(leaf, held), {})[(text(leaf), text(held))] = line
                    if shown:
                        print("    condition " + line)

    invalid = check_invalid()
    elapsed = time.monotonic() - started
    if disagreements:
        print(f"\nConditions on which the server and PROTOCOL.md disagree, by what the case has in common:")
        for label, lines in sorted(findings.items(), key=lambda item: item[0] == UNEXPLAINED):
            print(f"- {label}: {len(lines)} distinct conditions, e.g.")
            for line in sorted(lines.values())[: 40 if label == UNEXPLAINED else 3]:
                print("    " + line)
        fail(f"{len(disagreements)} of {arguments.filters} filters ({partial} matching some records but not all) "
             f"disagree with PROTOCOL.md over {len(records)} records "
             f"(seed {arguments.seed}, {elapsed:.1f}s); the {invalid} invalid filters answered 422")
    print(f"outside where: {arguments.filters} random filters ({partial} matching some records but not all) over "
          f"{len(records)} records agree with PROTOCOL.md, {invalid} invalid ones answered 422 "
          f"(seed {arguments.seed}, {elapsed:.1f}s)")

main()
