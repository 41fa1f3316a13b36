// A project's files: search by name, tag and status; metadata; download (fetch with the token, then a blob); delete.
import { call, del, get, query, seg } from "./api.js";
import { badge, bytes, el, errorBox, field, heading, loading, replace, table, when } from "./ui.js";

export function renderFiles(container, project) {
  const base = `/v1/projects/${seg(project)}/files`;
  const name = el("input", { id: "file-name", placeholder: "%photo%", autocomplete: "off" });
  const tag = el("input", { id: "file-tag", autocomplete: "off" });
  const statuses = ["new", "completed", "deleted"].map((value) =>
    el("input", { type: "checkbox", id: `status-${value}`, value, checked: value !== "deleted" }));
  const status = el("div", { id: "files-status", "aria-live": "polite" });
  const list = el("div", { id: "files" });
  const detail = el("div", { id: "file" });
  let next = null;
  let files = [];

  async function load(more = false) {
    if (!more) {
      next = null;
      files = [];
      replace(list, loading("Searching files…"));
    }
    const chosen = statuses.filter((box) => box.checked).map((box) => box.value);
    try {
      const page = await get(base + query({ name: name.value, tag: tag.value.split(",").map((t) => t.trim()).filter(Boolean), status: chosen, after: next, limit: 100 }));
      files = [...files, ...page.files];
      next = page.next;
      show();
    } catch (error) {
      replace(list, errorBox(error));
    }
  }

  async function download(file) {
    replace(status, el("p", { class: "loading", role: "status" }, `Downloading ${file.name}…`));
    try {
      const response = await call("GET", `${base}/${seg(file.id)}/content`, undefined, { raw: true });
      const url = URL.createObjectURL(await response.blob());
      const link = el("a", { href: url, download: file.name });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      replace(status, el("p", { class: "ok", role: "status" }, `Downloaded ${file.name}.`));
    } catch (error) {
      replace(status, errorBox(error));
    }
  }

  async function remove(file) {
    if (!confirm(`Delete ${file.name}? Its bytes are removed; records that name it keep its id.`)) return;
    try {
      await del(`${base}/${seg(file.id)}`);
      replace(status, el("p", { class: "ok", role: "status" }, `Deleted ${file.name}.`));
      replace(detail);
      load();
    } catch (error) {
      replace(status, errorBox(error));
    }
  }

  function showFile(file) {
    replace(detail, el("h2", {}, file.name),
      el("div", { class: "row-actions" },
        file.status === "completed" ? el("button", { type: "button", onclick: () => download(file) }, "Download") : null,
        file.status !== "deleted" ? el("button", { type: "button", class: "danger", onclick: () => remove(file) }, "Delete") : null),
      el("dl", { class: "facts" }, [
        ["Id", file.id], ["Type", file.contentType], ["Size", `${bytes(file.size)} (${file.size} bytes)`], ["SHA-256", file.sha256 ?? "—"],
        ["Status", file.status], ["Tags", (file.tags ?? []).join(", ") || "—"], ["Public", file.public ? "yes" : "no"],
        ["Created", `${when(file.createdAt)} by ${file.createdBy ?? "—"}`], ["Updated", when(file.updatedAt)],
        ["Attached to", file.attachTo ? `${file.attachTo.collection}/${file.attachTo.id}.${file.attachTo.field}` : "—"],
        ["Uploaded", `${bytes(file.uploadOffset)} of ${bytes(file.size)}`], ["Expires", when(file.expiresAt)],
      ].map(([term, value]) => [el("dt", {}, term), el("dd", {}, value)])));
  }

  function show() {
    replace(list,
      table([
        ["Name", (f) => f.name],
        ["Size", (f) => el("span", { class: "nowrap" }, bytes(f.size))],
        ["Type", (f) => f.contentType],
        ["Status", (f) => badge(f.status, f.status === "completed" ? "ok" : f.status === "deleted" ? "bad" : "warn")],
        ["Tags", (f) => (f.tags ?? []).join(", ")],
        ["Created", (f) => `${when(f.createdAt)} by ${f.createdBy ?? "—"}`],
      ], files, { onRow: showFile, empty: "No files match." }),
      next ? el("button", { type: "button", onclick: () => load(true) }, "More files") : null);
  }

  const form = el("form", { id: "files-form", class: "inline", onsubmit: (event) => { event.preventDefault(); replace(detail); load(); } },
    field("Name (% and _ as wildcards)", name), field("Tags (comma-separated, all must be present)", tag),
    el("fieldset", {}, el("legend", {}, "Status"), statuses.map((box) => el("label", { for: box.id, class: "check" }, box, ` ${box.value}`))),
    el("button", { type: "submit" }, "Search"));
  replace(container, heading(`Files of ${project}`), form, status, el("div", { class: "split" }, list, detail));
  load();
}
