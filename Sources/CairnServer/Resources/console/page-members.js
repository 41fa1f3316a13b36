// A project's members: roles and claims; add, change, remove; revoke a member's sign-ins.
import { all, del, post, put, seg } from "./api.js";
import { compact, el, errorBox, field, heading, into, perform, replace, select, table } from "./ui.js";

const roles = ["reader", "writer", "admin"];

export function renderMembers(container, project, session) {
  const base = `/v1/projects/${seg(project)}/members`;
  const status = el("div", { id: "members-status", "aria-live": "polite" });
  const list = el("div");

  const act = (what, action) => perform(status, what, action, () => load());

  function claimsEditor(member) {
    const text = el("textarea", { rows: 4, class: "code", spellcheck: "false" }, JSON.stringify(member.claims ?? {}, null, 2));
    const form = el("form", {
      class: "inline-editor",
      onsubmit: (event) => {
        event.preventDefault();
        let claims;
        try {
          claims = JSON.parse(text.value);
        } catch (error) {
          replace(status, errorBox({ code: "invalid_json", message: error.message }));
          return;
        }
        act(`Setting ${member.user}'s claims`, () => put(`${base}/${seg(member.user)}/claims`, claims));
      },
    }, field(`Claims of ${member.user} (JSON object)`, text), el("button", { type: "submit" }, "Save claims"));
    return form;
  }

  function actions(member) {
    const role = select(roles, member.role, { "aria-label": `Role of ${member.user}` });
    const editorSlot = el("div");
    return el("div", { class: "row-actions" },
      role,
      el("button", { type: "button", onclick: () => act(`Changing ${member.user}'s role`, () => put(`${base}/${seg(member.user)}`, { role: role.value })) }, "Change role"),
      el("button", { type: "button", onclick: () => replace(editorSlot, claimsEditor(member)) }, "Edit claims"),
      el("button", { type: "button", class: "warn", onclick: () => confirm(`Revoke every sign-in of ${member.user}? Their devices must sign in again.`)
        && act(`Revoking ${member.user}'s sign-ins`, () => post(`${base}/${seg(member.user)}/revoke-sign-ins`)) }, "Revoke sign-ins"),
      el("button", { type: "button", class: "danger", onclick: () => confirm(`Remove ${member.user} from ${project}?`)
        && act(`Removing ${member.user}`, () => del(`${base}/${seg(member.user)}`)) }, "Remove"),
      editorSlot);
  }

  function load() {
    into(list, () => all(base), (members) => table([
      ["User", (m) => m.user],
      ["Role", (m) => m.role],
      ["Claims", (m) => el("code", {}, compact(m.claims ?? {}))],
      ["Actions", actions],
    ], members, { empty: "No members yet." }));
  }

  const userInput = el("input", { name: "user", required: true, autocomplete: "off", list: "known-users" });
  const known = el("datalist", { id: "known-users" });
  if (session.user.operator) all("/v1/admin/users").then((users) => replace(known, users.map((u) => el("option", { value: u.name })))).catch(() => {});
  const newRole = select(roles, "reader");
  const addForm = el("form", {
    id: "add-member", class: "inline",
    onsubmit: (event) => {
      event.preventDefault();
      act(`Adding ${userInput.value}`, () => put(`${base}/${seg(userInput.value)}`, { role: newRole.value }));
    },
  }, field("User", userInput), known, field("Role", newRole), el("button", { type: "submit" }, "Add or change member"));

  replace(container, heading(`Members of ${project}`),
    el("p", { class: "muted" }, "Users are made on the server with cairn admin add-user; here they join the project."),
    addForm, status, list);
  load();
}
