// A project's schema: collections with fields, indexes, conflict policy and rules; and setting a new schema from JSON,
// with the server's validation errors shown beside the editor.
import { get, put, seg } from "./api.js";
import { badge, describe, el, errorBox, field, heading, into, replace, table } from "./ui.js";

function collectionCard(collection) {
  return el("section", { class: "card" },
    el("h3", {}, collection.name, " ", badge(collection.conflictPolicy ?? "reject", "policy")),
    table([["Field", (f) => f.name], ["Type", (f) => f.type]], collection.fields ?? [], { empty: "No fields." }),
    el("p", {}, el("strong", {}, "Indexes: "),
      (collection.indexes ?? []).length ? collection.indexes.map((index) => index.join(", ")).join(" · ") : "none"),
    collection.rules ? el("div", {}, el("strong", {}, "Rules"), el("dl", { class: "rules" },
      Object.entries(collection.rules).map(([kind, rule]) => [el("dt", {}, kind), el("dd", {}, el("code", {}, describe(rule)))]))) : el("p", { class: "muted" }, "No data rules: every member reads and writes every record their role allows."));
}

export function renderProject(container, project) {
  const body = el("div");
  replace(container, heading(`Project ${project}`), body);
  into(body, () => get(`/v1/projects/${seg(project)}/schema`), (schema) => {
    const editor = el("textarea", { rows: 14, spellcheck: "false", class: "code" }, JSON.stringify({ collections: schema.collections }, null, 2));
    const outcome = el("div", { id: "schema-outcome", "aria-live": "polite" });
    const save = el("button", { type: "submit" }, "Set schema");
    const form = el("form", {
      id: "schema-form",
      onsubmit: async (event) => {
        event.preventDefault();
        let parsed;
        try {
          parsed = JSON.parse(editor.value);
        } catch (error) {
          replace(outcome, errorBox({ code: "invalid_json", message: `The text is not JSON: ${error.message}` }));
          return;
        }
        save.disabled = true;
        replace(outcome, el("p", { class: "loading", role: "status" }, "Saving…"));
        try {
          const stored = await put(`/v1/projects/${seg(project)}/schema`, parsed);
          replace(outcome, el("p", { class: "ok", role: "status" }, `Schema set: version ${stored.version}.`));
          setTimeout(() => renderProject(container, project), 1200);
        } catch (error) {
          replace(outcome, errorBox(error));
          editor.setAttribute("aria-invalid", "true");
        } finally {
          save.disabled = false;
        }
      },
    }, field("New schema (JSON). Additive changes apply at once; a breaking one (a renamed, retyped or removed field, a removed collection, a new required field) needs its steps in \"migrations\" (rename, convert, drop, fill).", editor), save, outcome);
    return [
      el("p", { class: "muted" }, "Schema version ", el("code", {}, schema.version)),
      el("h2", {}, "Collections"),
      schema.collections.length ? el("div", { class: "cards" }, schema.collections.map(collectionCard)) : el("p", { class: "empty" }, "No collections yet."),
      el("h2", {}, "Set a new schema"),
      form,
    ];
  });
}
