// Log in and register (/account): a handle (3–20 of A–Z a–z 0–9 _ -, unique regardless of case) and a password
// (8–128 characters). The session logs in to the account; its token, kept in localStorage, then carries it.

import { errorText } from "./refusals.js";
import { field, fill, h } from "./dom.js";
import { t } from "./i18n.js";

const HANDLE_PATTERN = "[A-Za-z0-9][A-Za-z0-9_\\-]{2,19}";

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
    document.title = `${t("web.account.title")} · Flower Garden Race`;
    const session = this.conn.session;
    if (session.account) {
      fill(this.root, h("div", { class: "panel entry" }, h("h1", {}, t("web.account.logged_in", { handle: session.account })),
        h("p", {}, h("a", { href: `/player/${encodeURIComponent(session.account)}`, dataset: { link: "" } }, t("web.account.your_races")), " · ", h("a", { href: "/leaderboard", dataset: { link: "" } }, t("web.nav.leaderboard"))),
        h("a", { class: "button", href: "/", dataset: { link: "" } }, t("web.to_lobby"))));
      return;
    }
    fill(
      this.root,
      h("div", { class: "account-page" },
        h("h1", { class: "sr-only" }, t("web.account.title")),
        this.form("login", t("web.account.login"), t("web.account.login_text")),
        this.form("register", t("web.account.register"), t("web.account.register_text")),
      ),
    );
  }

  form(kind, title, text) {
    const handle = h("input", { name: "handle", required: true, autocomplete: "username", pattern: HANDLE_PATTERN, maxlength: "20", placeholder: t("web.account.handle_placeholder") });
    // The browser's own words for a pattern mismatch are "Please match the requested format.": say which format.
    handle.addEventListener("input", () => handle.setCustomValidity(handle.validity.patternMismatch ? t("web.account.handle_mismatch") : ""));
    const password = h("input", { name: "password", type: "password", required: true, minlength: "8", maxlength: "128", autocomplete: kind === "login" ? "current-password" : "new-password", placeholder: t("web.account.password_placeholder") });
    const error = h("p", { class: "error-text", role: "alert" });
    const form = h(
      "form",
      { class: `panel ${kind}-form`, dataset: { form: kind }, onsubmit: (event) => this.submit(event, kind, handle.value.trim(), password.value, error) },
      h("h2", {}, title),
      h("p", {}, text),
      field(t("web.account.handle"), handle, kind === "register" ? t("web.account.handle_rule") : null),
      field(t("web.account.password"), password, kind === "register" ? t("web.account.password_rule") : null),
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
