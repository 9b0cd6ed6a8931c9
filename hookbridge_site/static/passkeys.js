// Passkeys (identity.passkeys): adding one on the person's page, signing in with one on the login page.
// The server makes the options and checks the answer; this only carries them between it and the browser's
// WebAuthn, turning base64url into bytes and back. A browser without WebAuthn never shows the buttons.
(() => {
  const supported = Boolean(window.PublicKeyCredential && navigator.credentials);
  const bytes = (text) => Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(text.length / 4) * 4, "=")), (c) => c.charCodeAt(0));
  const text = (buffer) => btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  const csrf = () => JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";

  async function post(url, body) {
    const response = await fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
      body: body === undefined ? "" : JSON.stringify(body),
    });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(data.error || `the server answered ${response.status}`);
    return data;
  }

  function credentialJSON(credential) {
    const response = credential.response;
    const json = { id: credential.id, rawId: text(credential.rawId), type: credential.type, response: {
      clientDataJSON: text(response.clientDataJSON) }, clientExtensionResults: credential.getClientExtensionResults() };
    if (response.attestationObject) {
      json.response.attestationObject = text(response.attestationObject);
      json.response.transports = response.getTransports ? response.getTransports() : [];
    } else {
      json.response.authenticatorData = text(response.authenticatorData);
      json.response.signature = text(response.signature);
      if (response.userHandle) json.response.userHandle = text(response.userHandle);
    }
    return json;
  }

  function say(target, message, failed) {
    target.textContent = message;
    target.classList.toggle("error", Boolean(failed));
  }

  async function add(form) {
    const status = form.querySelector("[role=status]");
    say(status, "Follow your browser's prompt…");
    try {
      const options = await post(form.dataset.options);
      options.challenge = bytes(options.challenge);
      options.user.id = bytes(options.user.id);
      options.excludeCredentials = (options.excludeCredentials || []).map((c) => ({ ...c, id: bytes(c.id) }));
      const credential = await navigator.credentials.create({ publicKey: options });
      await post(form.action, { name: form.elements.name.value, credential: credentialJSON(credential) });
      window.location.reload();
    } catch (error) {
      say(status, `No passkey was added: ${error.message}`, true);
    }
  }

  async function signIn(button) {
    const status = document.getElementById("passkey-status");
    say(status, "Follow your browser's prompt…");
    try {
      const options = await post(button.dataset.options);
      options.challenge = bytes(options.challenge);
      options.allowCredentials = (options.allowCredentials || []).map((c) => ({ ...c, id: bytes(c.id) }));
      const credential = await navigator.credentials.get({ publicKey: options });
      const signedIn = await post(button.dataset.url, { credential: credentialJSON(credential), next: button.dataset.next });
      window.location.assign(signedIn.next);
    } catch (error) {
      say(status, `Not signed in: ${error.message}`, true);
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    document.querySelectorAll("[data-passkeys]").forEach((element) => { element.hidden = !supported; });
    document.querySelectorAll("[data-passkeys-unsupported]").forEach((element) => { element.hidden = supported; });
  });
  document.addEventListener("submit", (event) => {
    if (event.target.matches("form[data-passkey-add]")) {
      event.preventDefault();
      add(event.target);
    }
  });
  document.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-passkey-sign-in]");
    if (button) signIn(button);
  });
})();
