// Log in and register (/account): a handle (3–20 of A–Z a–z 0–9 _ -, unique regardless of case) and a password
// (8–128 characters). The session logs in to the account; its token, kept in localStorage, then carries it.

import { errorText } from "./refusals.js";
import { field, fill, h } from "./dom.js";

const HANDLE_PATTERN = "[A-Za-z0-9][A-Za-z0-9_\\-]{2,19}";
const HANDLE_RULE = "3–20 letters, digits, _ or -, starting with a letter or digit";

export function mountAccount(root, app) {
  const view = new AccountView(root, app);
  view.start();
  return view;
}

class AccountView {
  constructor(root, app) {
    this.root = root;
    this.app = app;
    this.conn = app.conn;
  }

  start() {
    document.title = "Log in · Flower Garden Race";
    const session = this.conn.session;
    if (session.account) {
      fill(this.root, h("div", { class: "panel entry" }, h("h1", {}, `Logged in as ${session.account}`),
        h("p", {}, h("a", { href: `/player/${encodeURIComponent(session.account)}`, dataset: { link: "" } }, "Your races and stats"), " · ", h("a", { href: "/leaderboard", dataset: { link: "" } }, "Leaderboard")),
        h("a", { class: "button", href: "/", dataset: { link: "" } }, "To the lobby")));
      return;
    }
    fill(
      this.root,
      h("div", { class: "account-page" },
        h("h1", { class: "sr-only" }, "Log in or register"),
        this.form("login", "Log in", "Your races, rating and history follow your account on every device."),
        this.form("register", "Register a handle", "Registered players can race rated, appear on the leaderboard and keep a history. Anonymous players can still race (shown as guests)."),
      ),
    );
  }

  form(kind, title, text) {
    const handle = h("input", { name: "handle", required: true, autocomplete: "username", pattern: HANDLE_PATTERN, maxlength: "20", placeholder: "handle" });
    // The browser's own words for a pattern mismatch are "Please match the requested format.": say which format.
    handle.addEventListener("input", () => handle.setCustomValidity(handle.validity.patternMismatch ? `A handle is ${HANDLE_RULE}.` : ""));
    const password = h("input", { name: "password", type: "password", required: true, minlength: "8", maxlength: "128", autocomplete: kind === "login" ? "current-password" : "new-password", placeholder: "password" });
    const error = h("p", { class: "error-text", role: "alert" });
    const form = h(
      "form",
      { class: `panel ${kind}-form`, dataset: { form: kind }, onsubmit: (event) => this.submit(event, kind, handle.value.trim(), password.value, error) },
      h("h2", {}, title),
      h("p", {}, text),
      field("Handle", handle, kind === "register" ? HANDLE_RULE : null),
      field("Password", password, kind === "register" ? "8 to 128 characters; stored only as a salted slow hash" : null),
      h("button", { type: "submit", class: "primary" }, title),
      error,
    );
    return form;
  }

  async submit(event, kind, handle, password, error) {
    event.preventDefault();
    error.textContent = "";
    const button = event.target.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      if (kind === "login") await this.conn.login(handle, password);
      else await this.conn.register(handle, password);
      await this.app.loggedIn();
      this.app.navigate("/");
    } catch (failure) {
      error.textContent = errorText(failure);
    } finally {
      button.disabled = false;
    }
  }
}
