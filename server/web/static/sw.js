// The installed app's service worker (served at /sw.js, so it covers every page): when a page cannot be loaded
// because the server is unreachable, it answers the offline page, which says the game needs its server. Nothing
// else is cached or answered here: races are played on the server, and assets come from it as they always do.

const BUILD = "{{build}}";
const OFFLINE = `/static/${BUILD}/offline.html`;
const KEPT = [OFFLINE, `/static/${BUILD}/css/app.css`, `/static/${BUILD}/favicon.svg`];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(BUILD).then((cache) => cache.addAll(KEPT)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  // An older build's offline page goes with its build.
  event.waitUntil(caches.keys().then((names) => Promise.all(names.filter((name) => name !== BUILD).map((name) => caches.delete(name)))).then(() => self.clients.claim()));
});

self.addEventListener("fetch", (event) => {
  if (event.request.mode !== "navigate") return;
  event.respondWith(fetch(event.request).catch(() => caches.match(OFFLINE)));
});
