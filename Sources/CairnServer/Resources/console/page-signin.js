// Sign-in: a Cairn username and password, or an identity provider's token.
import { signIn, signInWithToken } from "./session.js";
import { el, errorBox, field, replace } from "./ui.js";

/** The sign-in form; `done` runs once signed in. */
export function renderSignIn(done) {
  const status = el("div", { "aria-live": "polite" });
  const username = el("input", { name: "username", autocomplete: "username", required: true });
  const password = el("input", { name: "password", type: "password", autocomplete: "current-password", required: true });
  const token = el("textarea", { name: "token", rows: 4, required: true, spellcheck: "false" });

  async function attempt(event, action, button) {
    event.preventDefault();
    button.disabled = true;
    replace(status, el("p", { class: "loading", role: "status" }, "Signing in…"));
    try {
      await action();
      done();
    } catch (error) {
      replace(status, errorBox(error));
    } finally {
      button.disabled = false;
    }
  }

  const passwordButton = el("button", { type: "submit" }, "Sign in");
  const passwordForm = el("form", { id: "signin", onsubmit: (event) => attempt(event, () => signIn(username.value, password.value), passwordButton) },
    field("Username", username), field("Password", password), passwordButton);
  const tokenButton = el("button", { type: "submit" }, "Sign in with token");
  const tokenForm = el("form", { id: "signin-token", onsubmit: (event) => attempt(event, () => signInWithToken(token.value.trim()), tokenButton) },
    field("Identity provider token (JWT)", token, "For servers started with --jwks. The token is kept in this tab only."), tokenButton);

  return el("section", { class: "signin" },
    el("h1", {}, "Sign in"),
    el("p", { class: "muted" }, "For server operators and project admins."),
    passwordForm,
    status,
    el("details", {}, el("summary", {}, "Sign in with an identity provider's token"), tokenForm));
}
