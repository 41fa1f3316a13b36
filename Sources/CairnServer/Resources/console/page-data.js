// A collection's records in pages, with a filter and a sort; one record with its fields and `explain`; and "view as
// user": the records that member's devices receive (the server's view-as route, computed by its own rule code).
import { all, get, query, seg } from "./api.js";
import { badge, compact, describe, el, errorBox, field, heading, into, loading, replace, select, table, when } from "./ui.js";

const ops = ["eq", "ne", "lt", "lte", "gt", "gte", "like", "in", "contains", "exists"];

/** The filter value typed for `type`: numbers and booleans parsed, `in` a list, `exists` a boolean. */
function typedValue(text, type, op) {
  if (op === "exists") return text.trim() !== "false";
  if (op === "in") {
    try {
      const parsed = JSON.parse(text);
      if (Array.isArray(parsed)) return parsed;
    } catch { /* a comma-separated list */ }
    return text.split(",").map((part) => typedValue(part.trim(), type, "eq"));
  }
  if (type === "integer" || type === "number") return text.trim() === "" ? null : Number(text);
  if (type === "boolean") return text.trim() === "true";
  if (type === "json") {
    try { return JSON.parse(text); } catch { return text; }
  }
  return text;
}

function verdictView(title, verdict) {
  return el("section", { class: "card verdict" },
    el("h4", {}, title, " ", verdict.allowed ? badge("allowed", "ok") : badge("refused", "bad")),
    el("p", {}, verdict.reason),
    el("dl", { class: "rules" },
      verdict.rule ? [el("dt", {}, "Rule"), el("dd", {}, el("code", {}, describe(verdict.rule)))] : null,
      verdict.bound ? [el("dt", {}, "With this user's values"), el("dd", {}, el("code", {}, describe(verdict.bound)))] : null),
    verdict.conditions?.length ? table([
      ["Where", (c) => el("code", {}, c.path)],
      ["Condition", (c) => el("code", {}, describe(c.bound ?? c.condition))],
      ["Holds", (c) => (c.matches ? badge("yes", "ok") : badge("no"))],
      ["Decides", (c) => (c.decides ? "yes" : "")],
    ], verdict.conditions) : null);
}

export function renderData(container, project) {
  const base = `/v1/projects/${seg(project)}`;
  replace(container, heading(`Data of ${project}`), loading());
  Promise.all([get(`${base}/schema`), all(`${base}/members`)]).then(([schema, members]) => {
    if (schema.collections.length === 0) {
      replace(container, heading(`Data of ${project}`), el("p", { class: "empty" }, "This project has no collections yet."));
      return;
    }
    build(container, base, schema, members);
  }).catch((error) => replace(container, heading(`Data of ${project}`), errorBox(error)));
}

function build(container, base, schema, members) {
  const state = { collection: schema.collections[0], cursor: null, records: [], total: null, hasMore: false, asUser: "" };
  const collectionSelect = select(schema.collections.map((c) => c.name), state.collection.name, { id: "collection" });
  const fieldSelect = el("select", { id: "filter-field" });
  const opSelect = select(ops, "eq", { id: "filter-op" });
  const valueInput = el("input", { id: "filter-value", autocomplete: "off" });
  const jsonFilter = el("textarea", { id: "filter-json", rows: 3, class: "code", spellcheck: "false", placeholder: '{"field": "done", "op": "eq", "value": false}' });
  const sortSelect = el("select", { id: "sort-field" });
  const directionSelect = select([["asc", "ascending"], ["desc", "descending"]], "asc", { id: "sort-direction" });
  const sizeSelect = select(["25", "50", "100", "500"], "50", { id: "page-size" });
  const asUserSelect = select([["", "everything (as admin)"], ...members.map((m) => [m.user, `${m.user} (${m.role})`])], "", { id: "view-as" });
  const results = el("div", { id: "records" });
  const detail = el("div", { id: "record" });
  const verdicts = el("div", { id: "explain", "aria-live": "polite" });

  function fillFields() {
    const names = ["id", ...(state.collection.fields ?? []).map((f) => f.name)];
    replace(fieldSelect, el("option", { value: "" }, "(no filter)"), names.map((n) => el("option", { value: n }, n)));
    replace(sortSelect, ["id", "version", "updatedAt", ...(state.collection.fields ?? []).map((f) => f.name)].map((n) => el("option", { value: n }, n)));
  }
  fillFields();

  function filter() {
    if (jsonFilter.value.trim()) return jsonFilter.value.trim();
    if (!fieldSelect.value) return "";
    const type = (state.collection.fields ?? []).find((f) => f.name === fieldSelect.value)?.type ?? "string";
    return JSON.stringify({ field: fieldSelect.value, op: opSelect.value, value: typedValue(valueInput.value, type, opSelect.value) });
  }

  function sorted(records) {
    const key = sortSelect.value, sign = directionSelect.value === "desc" ? -1 : 1;
    const value = (r) => (key === "id" || key === "version" || key === "updatedAt" ? r[key] : r.data?.[key]);
    return [...records].sort((a, b) => {
      const x = value(a), y = value(b);
      if (x === y) return 0;
      if (x === undefined || x === null) return 1;
      if (y === undefined || y === null) return -1;
      return (x < y ? -1 : 1) * sign;
    });
  }

  async function load(more = false) {
    const path = state.asUser
      ? `${base}/collections/${seg(state.collection.name)}/view-as`
      : `${base}/collections/${seg(state.collection.name)}/changes`;
    const parameters = { user: state.asUser || undefined, where: filter(), limit: sizeSelect.value, since: more ? state.cursor : undefined };
    if (!more) replace(results, loading("Loading records…"));
    try {
      const page = await get(path + query(parameters));
      const live = page.changes.filter((c) => !c.deleted && !c.gone);
      state.records = more ? [...state.records, ...live] : live;
      if (!more) state.total = page.total ?? null;
      state.cursor = page.cursor;
      state.hasMore = page.hasMore;
      show();
    } catch (error) {
      replace(results, errorBox(error));
    }
  }

  function show() {
    const columns = (state.collection.fields ?? []).slice(0, 5);
    const who = state.asUser ? `${state.asUser}'s devices receive` : "match";
    const count = `${state.records.length}${state.total !== null ? ` of ${state.total}` : ""} records ${who}`;
    replace(results,
      state.asUser ? el("p", { class: "banner", id: "view-as-banner" }, `Viewing as ${state.asUser}: exactly the records their pulls return.`) : null,
      el("p", { class: "muted", id: "record-count", role: "status" }, count),
      table([
        ["id", (r) => el("code", { class: "nowrap" }, r.id)],
        ...columns.map((f) => [f.name, (r) => compact(r.data?.[f.name])]),
        ["version", (r) => r.version],
        ["updated", (r) => el("span", { class: "nowrap" }, when(r.updatedAt))],
        ["by", (r) => r.updatedBy ?? ""],
      ], sorted(state.records), { onRow: showRecord, empty: "No records match." }),
      state.hasMore ? el("button", { type: "button", id: "next-page", onclick: () => load(true) }, "Load the next page") : null);
  }

  function showRecord(record) {
    const declared = new Map((state.collection.fields ?? []).map((f) => [f.name, f.type]));
    const names = [...new Set([...declared.keys(), ...Object.keys(record.data ?? {})])];
    const explainUser = select(members.map((m) => m.user), state.asUser || members[0]?.user, { id: "explain-user" });
    const explainForm = el("form", {
      class: "inline",
      onsubmit: async (event) => {
        event.preventDefault();
        replace(verdicts, loading("Explaining…"));
        try {
          const answer = await get(`${base}/explain${query({ user: explainUser.value, collection: state.collection.name, id: record.id })}`);
          replace(verdicts,
            el("h2", {}, `Explain: ${answer.user} and record ${record.id}`),
            el("p", {}, `${answer.user} is ${answer.role ? answer.role : "not a member"} with claims `, el("code", {}, compact(answer.claims))),
            el("div", { class: "cards verdicts" }, verdictView("Read", answer.read), verdictView("Write", answer.write)));
        } catch (error) {
          replace(verdicts, errorBox(error));
        }
      },
    }, field("Who may read and write it? User", explainUser), el("button", { type: "submit" }, "Explain"));
    const fields = el("div", { id: "record-fields" });
    into(fields, () => get(`${base}/collections/${seg(state.collection.name)}/records/${seg(record.id)}/field-versions`), (answer) => table([
      ["Field", (n) => n],
      ["Type", (n) => declared.get(n) ?? "(not in schema)"],
      ["Value", (n) => el("code", { class: "value" }, compact(record.data?.[n]) || "—")],
      ["Last changed", (n) => {
        const version = answer.fieldVersions[n];
        if (version === undefined) return "—";
        return version === answer.version ? `version ${version} (the last change)` : `version ${version}`;
      }],
    ], names, { caption: "Fields" }));
    replace(detail,
      el("h2", {}, "Record ", el("code", {}, record.id)),
      el("dl", { class: "facts" },
        el("dt", {}, "Version"), el("dd", {}, record.version),
        el("dt", {}, "Last change"), el("dd", {}, `${when(record.updatedAt)} by ${record.updatedBy ?? "—"}`)),
      fields,
      el("p", { class: "muted" }, "Versions number every change of the project in order: a field's version is the change that last set it."),
      members.length ? explainForm : el("p", { class: "empty" }, "The project has no members to explain for."));
    replace(verdicts);
    detail.scrollIntoView({ block: "nearest" });
  }

  const form = el("form", {
    id: "data-form", class: "controls",
    onsubmit: (event) => {
      event.preventDefault();
      state.asUser = asUserSelect.value;
      replace(detail);
      replace(verdicts);
      load();
    },
  },
  field("Collection", collectionSelect),
  field("Filter on", fieldSelect), field("Operator", opSelect), field("Value", valueInput),
  field("Sort this page by", sortSelect), field("Order", directionSelect),
  field("Page size", sizeSelect), field("View as", asUserSelect, "A member's view: what their devices pull."),
  el("details", { class: "wide" }, el("summary", {}, "Filter as JSON (the protocol's filter language)"), field("JSON filter (overrides the fields above)", jsonFilter)),
  el("div", { class: "wide" }, el("button", { type: "submit", id: "apply" }, "Show records")));

  collectionSelect.addEventListener("change", () => {
    state.collection = schema.collections.find((c) => c.name === collectionSelect.value);
    fillFields();
    replace(detail);
    replace(verdicts);
    load();
  });
  sortSelect.addEventListener("change", show);
  directionSelect.addEventListener("change", show);

  replace(container, heading(`Data of ${base.split("/").pop()}`), form, el("div", { class: "split" }, results, detail), verdicts);
  load();
}
