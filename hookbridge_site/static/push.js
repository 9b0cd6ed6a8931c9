// Notifications on this browser (templates/notify/push.html, notify.push_views): the service worker subscribes
// to the browser's own push service with the server's key, and the subscription is posted to the server for the
// person signed in. Turning it off here also ends the browser's subscription, so nothing is left half on.
"use strict";

(() => {
  const box = document.querySelector(".push-here");
  if (!box) return;
  const state = box.querySelector(".push-state");
  const button = box.querySelector(".push-on");
  const say = (text) => { state.textContent = text; };
  const csrf = () => JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
  const listed = (endpoint) => [...document.querySelectorAll(".push-list li[data-endpoint]")]
    .find((row) => row.dataset.endpoint === endpoint);

  function keyBytes(base64url) {
    const padded = (base64url + "=".repeat((4 - (base64url.length % 4)) % 4)).replace(/-/g, "+").replace(/_/g, "/");
    return Uint8Array.from(atob(padded), (char) => char.charCodeAt(0));
  }

  async function current() {
    const registration = await navigator.serviceWorker.getRegistration("/");
    return registration ? registration.pushManager.getSubscription() : null;
  }

  async function post(subscription) {
    const response = await fetch(box.dataset.subscribeUrl, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
      body: JSON.stringify(subscription),
    });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.error || `the server answered ${response.status}`);
  }

  // Each step fails in its own words (issue 55): Chromium without a push service of its own says "Registration
  // failed - permission denied" from subscribe() although notifications are allowed, so that message is not
  // passed on as if the person had blocked them.
  class Step extends Error {}

  async function step(words, work) {
    try {
      return await work();
    } catch (error) {
      throw new Step(words(error && error.message ? error.message : String(error)));
    }
  }

  async function turnOn() {
    button.disabled = true;
    say("Asking this browser…");
    try {
      if (await Notification.requestPermission() !== "granted") {
        say("Notifications are blocked for this site: allow them in the browser's site settings, then try again.");
        return;
      }
      const registration = await step(
        (why) => `this page's service worker could not start (the browser said: ${why}).`,
        async () => { const made = await navigator.serviceWorker.register("/sw.js"); await navigator.serviceWorker.ready; return made; },
      );
      const subscription = await step(
        (why) => "notifications are allowed here, but this browser could not reach its own push service "
          + `(it said: “${why}”). Check the network; some browsers (builds without Google's services, private `
          + "windows) have no push service at all.",
        () => registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(box.dataset.publicKey) }),
      );
      await step((why) => `the server did not keep this browser: ${why}.`, () => post(subscription.toJSON()));
      window.location.reload(); // the list shows this browser, and this box says it is on
    } catch (error) {
      say(`Not turned on: ${error instanceof Step ? error.message : `something went wrong here (${error.message}).`}`);
    } finally {
      button.disabled = false;
    }
  }

  async function check() {
    if (!("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window)) {
      say("This browser cannot take notifications. On an iPhone or iPad, add Hook Bridge to the Home Screen "
        + "(Share, then Add to Home Screen) and open it from there.");
      return;
    }
    const subscription = await current().catch(() => null);
    if (subscription && listed(subscription.endpoint)) {
      const row = listed(subscription.endpoint);
      row.classList.add("this-browser");
      row.querySelector("strong").insertAdjacentText("beforeend", " (this browser)");
      say("On: this browser is told of every question you may answer.");
      return;
    }
    say(Notification.permission === "denied"
      ? "Notifications are blocked for this site: allow them in the browser's site settings first."
      : "Off on this browser.");
    button.hidden = Notification.permission === "denied";
  }

  button.addEventListener("click", turnOn);
  document.addEventListener("submit", async (event) => {
    const row = event.target.closest(".push-list li.this-browser");
    if (!row) return;
    event.preventDefault();
    const subscription = await current().catch(() => null);
    if (subscription) await subscription.unsubscribe().catch(() => false);
    event.target.submit();
  });
  check();
})();
