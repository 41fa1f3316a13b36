// DOM helpers. Every value from the server reaches the page as text (textContent, attribute values): never as HTML.

/** Makes an element: `el("td", {class: "num"}, "42", child)`. Attributes starting with "on" are listeners. */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (value === true) node.setAttribute(name, "");
    else node.setAttribute(name, String(value));
  }
  append(node, children);
  return node;
}

/** Appends children: nodes as they are, anything else as text; arrays flattened, null and undefined skipped. */
export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Replaces the children of `node`. */
export function replace(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}

/** A date in the browser's locale ("—" when absent). */
export function when(value) {
  if (!value) return "—";
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? String(value) : date.toLocaleString();
}

/** A byte count, readable. */
export function bytes(count) {
  if (count === undefined || count === null) return "—";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = count, unit = 0;
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit++; }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

/** A JSON value as compact text, for a table cell. */
export function compact(value) {
  if (value === undefined) return "";
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

/** A table: `columns` are `[heading, (row) => cell content]`; `onRow` makes rows clickable and focusable. */
export function table(columns, rows, { onRow, caption, empty = "Nothing here." } = {}) {
  if (rows.length === 0) return el("p", { class: "empty" }, empty);
  const head = el("tr", {}, columns.map(([heading]) => el("th", { scope: "col" }, heading)));
  const body = rows.map((row) => {
    const tr = el("tr", {}, columns.map(([, cell]) => el("td", {}, cell(row))));
    if (onRow) {
      tr.classList.add("clickable");
      tr.tabIndex = 0;
      tr.addEventListener("click", () => onRow(row));
      tr.addEventListener("keydown", (event) => { if (event.key === "Enter") onRow(row); });
    }
    return tr;
  });
  return el("div", { class: "table-wrap" },
    el("table", {}, caption ? el("caption", {}, caption) : null, el("thead", {}, head), el("tbody", {}, body)));
}

/** A labelled form control: `field("Name", input)`. */
export function field(label, control, hint) {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  control.id = id;
  return el("div", { class: "field" }, el("label", { for: id }, label), control, hint ? el("small", { class: "muted" }, hint) : null);
}

/** A select with `options` (values, or `[value, label]` pairs). */
export function select(options, selected, attributes = {}) {
  return el("select", attributes, options.map((option) => {
    const [value, label] = Array.isArray(option) ? option : [option, option];
    return el("option", { value, selected: value === selected }, label);
  }));
}

/** A box that says what went wrong: the server's code, message and the field it names. */
export function errorBox(error) {
  const details = error?.details?.field ? el("div", {}, "At: ", el("code", {}, error.details.field)) : null;
  return el("div", { class: "error", role: "alert" },
    el("strong", {}, error?.code ? `${error.code}` : "error"), " ", error?.message ?? String(error), details);
}

/** A loading line. */
export function loading(what = "Loading…") {
  return el("p", { class: "loading", role: "status" }, what);
}

/** Runs `load` into `container`: a loading line first, then what `render` makes of the result, or an error box. */
export async function into(container, load, render) {
  replace(container, loading());
  try {
    const result = await load();
    replace(container, render(result));
  } catch (error) {
    replace(container, errorBox(error));
  }
}

/** Runs a change the user asked for, saying in `status` that it runs, then that it is done (and calls `then`) or
 * what the server answered. */
export async function perform(status, what, action, then) {
  replace(status, el("p", { class: "loading", role: "status" }, `${what}…`));
  try {
    await action();
    replace(status, el("p", { class: "ok", role: "status" }, `${what}: done.`));
    then?.();
  } catch (error) {
    replace(status, errorBox(error));
  }
}

/** A heading with optional actions on its right. */
export function heading(text, ...actions) {
  return el("div", { class: "heading" }, el("h1", {}, text), el("div", { class: "actions" }, actions));
}

/** A badge, for roles and statuses. */
export function badge(text, kind = "") {
  return el("span", { class: `badge ${kind}` }, text);
}

/** A filter in words: `assignee eq user.name or region in ["north"]`; parameters by name, values as JSON. */
export function describe(filter) {
  if (!filter || typeof filter !== "object") return JSON.stringify(filter);
  const group = (parts, joiner) => (parts.length ? parts.map((part) => (part.and || part.or ? `(${describe(part)})` : describe(part))).join(joiner) : joiner.trim() === "and" ? "everything" : "nothing");
  if (filter.and) return group(filter.and, " and ");
  if (filter.or) return group(filter.or, " or ");
  if (filter.not) return `not (${describe(filter.not)})`;
  const value = filter.value && typeof filter.value === "object" && "param" in filter.value ? filter.value.param : JSON.stringify(filter.value);
  return `${filter.field} ${filter.op} ${value}`;
}
