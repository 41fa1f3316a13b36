// A project's integrations: service keys (made, shown once, revoked) and webhooks (added, their outbox's state, removed).
import { del, get, post, seg } from "./api.js";
import { append, badge, el, errorBox, field, heading, into, perform, replace, select, table, when } from "./ui.js";

const roles = ["reader", "writer", "admin"];
/** A webhook's status as a badge kind: `failing` (a day or more of failures) stands out as bad. */
const statusKinds = { ok: "ok", retrying: "warn", failing: "bad" };

export function renderIntegrations(container, project) {
  const base = `/v1/projects/${seg(project)}`;
  const keysStatus = el("div", { id: "service-keys-status", "aria-live": "polite" });
  const newKey = el("div", { id: "new-key" });
  const keys = el("div", { id: "service-keys" });
  const hooksStatus = el("div", { id: "webhooks-status", "aria-live": "polite" });
  const failing = el("div", { id: "webhooks-failing" });
  const hooks = el("div", { id: "webhooks" });

  // Service keys.

  function loadKeys() {
    into(keys, () => get(`${base}/service-keys`), (answer) => table([
      ["Name", (k) => el("code", {}, k.name)],
      ["Role", (k) => k.role],
      ["Created", (k) => when(k.createdAt)],
      ["Last used", (k) => (k.lastUsedAt ? when(k.lastUsedAt) : "never")],
      ["Actions", (k) => el("div", { class: "row-actions" },
        el("button", { type: "button", class: "danger", "data-name": k.name, onclick: () => confirm(`Revoke the service key ${k.name}? The systems using it are refused from their next request on.`)
          && perform(keysStatus, `Revoking ${k.name}`, () => del(`${base}/service-keys/${seg(k.name)}`), () => {
            if (newKey.dataset.name === k.name) hideKey();
            loadKeys();
          }) }, "Revoke"))],
    ], answer.serviceKeys, { empty: "No service keys yet." }));
  }

  function hideKey() {
    delete newKey.dataset.name;
    replace(newKey);
  }

  /** The new key's text, this once: the server keeps only its hash. */
  function showKey(made) {
    newKey.dataset.name = made.name;
    const copy = el("button", { type: "button", onclick: () => {
      if (!navigator.clipboard) {
        copy.textContent = "Select the key and copy it";
        return;
      }
      navigator.clipboard.writeText(made.key).then(() => (copy.textContent = "Copied"), () => (copy.textContent = "Select the key and copy it"));
    } }, "Copy");
    replace(newKey, el("div", { class: "key-once", role: "alert" },
      el("h3", {}, `Service key ${made.name} (${made.role})`),
      el("p", {}, el("strong", {}, "Copy this key now: it is not shown again. "),
        "The server keeps only its hash and cannot show it later; if it is lost, revoke it and make another."),
      el("code", { id: "new-key-text", class: "key-text" }, made.key),
      el("div", { class: "row-actions" }, copy, el("button", { type: "button", onclick: hideKey }, "I have saved it"))));
  }

  const keyName = el("input", { name: "name", required: true, autocomplete: "off", pattern: "[a-z][a-z0-9_]{0,62}", placeholder: "erp" });
  const keyRole = select(roles, "writer", { name: "role" });
  const keyForm = el("form", {
    id: "add-service-key", class: "inline",
    onsubmit: (event) => {
      event.preventDefault();
      const name = keyName.value;
      let made = null;
      hideKey();
      perform(keysStatus, `Making the service key ${name}`, async () => {
        made = await post(`${base}/service-keys`, { name, role: keyRole.value });
      }, () => {
        keyName.value = "";
        showKey(made);
        loadKeys();
      });
    },
  }, field("Name", keyName, "lowercase letters, digits and _"), field("Role", keyRole), el("button", { type: "submit" }, "Make service key"));

  // Webhooks.

  function loadHooks() {
    replace(failing);
    into(hooks, () => get(`${base}/webhooks`), (answer) => {
      const bad = answer.webhooks.filter((w) => w.status === "failing");
      if (bad.length > 0) {
        replace(failing, el("div", { class: "error", role: "alert" },
          el("strong", {}, `${bad.length === 1 ? "A webhook is" : `${bad.length} webhooks are`} failing: `),
          bad.map((w) => w.name).join(", "),
          ". Their deliveries have failed for a day or more; they keep their place and go on retrying, and the deletions they have not delivered are kept until they do."));
      }
      return table([
        ["Name", (w) => el("code", {}, w.name)],
        ["URL", (w) => el("code", {}, w.url)],
        ["Collections", (w) => (w.collections?.length ? w.collections.join(", ") : "all")],
        ["Status", (w) => [badge(w.status, statusKinds[w.status] ?? ""),
          w.failingSince ? el("div", { class: "muted" }, `since ${when(w.failingSince)}`) : null]],
        ["Delivered", (w) => el("span", { title: w.lastSuccessAt ? `last accepted ${when(w.lastSuccessAt)}` : "none accepted yet" }, String(w.delivered))],
        ["Behind", (w) => String(w.behind)],
        ["Failures", (w) => String(w.failures)],
        ["Last error", (w) => el("span", { class: "cell-text" }, w.lastError ?? "—")],
        ["Next attempt", (w) => when(w.nextAttemptAt)],
        ["Actions", (w) => el("div", { class: "row-actions" },
          el("button", { type: "button", class: "danger", "data-name": w.name, onclick: () => confirm(`Remove the webhook ${w.name}? No delivery starts after it.`)
            && perform(hooksStatus, `Removing ${w.name}`, () => del(`${base}/webhooks/${seg(w.name)}`), () => loadHooks()) }, "Remove"))],
      ], answer.webhooks, { empty: "No webhooks yet." });
    });
  }

  const hookName = el("input", { name: "name", required: true, autocomplete: "off", pattern: "[a-z][a-z0-9_]{0,62}", placeholder: "erp" });
  const hookURL = el("input", { name: "url", type: "url", required: true, autocomplete: "off", placeholder: "https://erp.example.com/cairn" });
  const hookSecret = el("input", { id: "webhook-secret", name: "secret", required: true, autocomplete: "off", spellcheck: "false", class: "code" });
  const collections = el("fieldset", { id: "webhook-collections" }, el("legend", {}, "Collections (none checked: all)"));
  get(`${base}/schema`).then((schema) => append(collections, schema.collections.map((c) => {
    const box = el("input", { type: "checkbox", id: `webhook-collection-${c.name}`, value: c.name });
    return el("label", { for: box.id, class: "check" }, box, ` ${c.name}`);
  }))).catch(() => append(collections, el("span", { class: "muted" }, "all (the schema could not be read)")));
  const generate = el("button", { type: "button", onclick: () => {
    const random = crypto.getRandomValues(new Uint8Array(32));
    hookSecret.value = Array.from(random, (byte) => byte.toString(16).padStart(2, "0")).join("");
  } }, "Generate");
  const hookForm = el("form", {
    id: "add-webhook", class: "inline",
    onsubmit: (event) => {
      event.preventDefault();
      const secret = hookSecret.value;
      if (new TextEncoder().encode(secret).length < 16) {
        replace(hooksStatus, errorBox({ code: "validation_failed", message: "The secret must be at least 16 bytes long." }));
        return;
      }
      const chosen = [...collections.querySelectorAll("input:checked")].map((box) => box.value);
      const name = hookName.value;
      perform(hooksStatus, `Adding the webhook ${name}`, () => post(`${base}/webhooks`, { name, url: hookURL.value, collections: chosen, secret }), () => {
        hookName.value = "";
        hookURL.value = "";
        hookSecret.value = "";
        loadHooks();
      });
    },
  }, field("Name", hookName, "lowercase letters, digits and _"), field("URL", hookURL),
  el("div", { class: "field" }, el("label", { for: "webhook-secret" }, "Secret"),
    el("div", { class: "row-actions" }, hookSecret, generate),
    el("small", { class: "muted" }, "16 bytes or more; the receiver checks Cairn-Signature with it. It is not shown again.")),
  collections, el("button", { type: "submit" }, "Add webhook"));

  replace(container,
    heading(`Integrations of ${project}`, el("button", { type: "button", id: "integrations-refresh", onclick: () => { loadKeys(); loadHooks(); } }, "Refresh")),
    el("h2", {}, "Service keys"),
    el("p", { class: "muted" }, "Other systems sign in with a service key (Authorization: Bearer KEY) and act in this project with its role; their writes carry updatedBy service:NAME."),
    keyForm, keysStatus, newKey, keys,
    el("h2", {}, "Webhooks"),
    el("p", { class: "muted" }, "A webhook posts every change committed to the project's collections to a URL, in order, at least once, signed with its secret."),
    hookForm, hooksStatus, failing, hooks);
  loadKeys();
  loadHooks();
}
