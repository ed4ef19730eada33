// The offline page's words (offline.html, answered by the service worker when the server cannot be reached): each
// element with a data-t key says it in the page's language, from the same tables as every other page. The worker
// keeps this module, i18n.js and the four tables, so the words need nothing from the server.

import { t } from "./i18n.js";

for (const element of document.querySelectorAll("[data-t]")) element.textContent = t(element.dataset.t);
document.title = `${t("web.offline.title_short")} · Flower Garden Race`;
