// The installed app's service worker (served at /sw.js, so it covers every page): when a page cannot be loaded
// because the server is unreachable, it answers the offline page, which says the game needs its server; the files
// that page needs (its style, its words) come from the cache when the server cannot send them. Nothing else is
// cached or answered here: races are played on the server, and assets come from it as they always do.

const BUILD = "{{build}}";
const OFFLINE = `/static/${BUILD}/offline.html`;
// The offline page says its words in the visitor's language: its module, i18n.js and every word table are kept too.
const WORDS = ["en", "pt", "fr", "es"].map((language) => `/static/${BUILD}/js/words/${language}.js`);
const KEPT = [OFFLINE, `/static/${BUILD}/css/app.css`, `/static/${BUILD}/favicon.svg`, `/static/${BUILD}/js/offline.js`, `/static/${BUILD}/js/i18n.js`, ...WORDS];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(BUILD).then((cache) => cache.addAll(KEPT)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  // An older build's offline page goes with its build.
  event.waitUntil(caches.keys().then((names) => Promise.all(names.filter((name) => name !== BUILD).map((name) => caches.delete(name)))).then(() => self.clients.claim()));
});

self.addEventListener("fetch", (event) => {
  if (event.request.mode === "navigate") {
    event.respondWith(fetch(event.request).catch(() => caches.match(OFFLINE)));
  } else if (KEPT.includes(new URL(event.request.url).pathname)) {
    event.respondWith(fetch(event.request).catch(() => caches.match(event.request.url)));
  }
});
