// Options' icons this browser cannot draw, left out.
// One module of the pages' script: ../hookbridge.js loads them all.

// An option's icon is the agent's text, usually an emoji: where this browser has no font for it, it would show as
// an empty box (issue 55), so it is left out; the option's title says it all anyway. A glyph is drawn if its
// pixels differ from those of a code point no font has (a private-use one).
const drawable = new Map();
function glyphDrawn(text) {
  if (!drawable.has(text)) {
    const canvas = document.createElement("canvas");
    canvas.width = canvas.height = 32;
    const context = canvas.getContext("2d", { willReadFrequently: true });
    if (!context) return true;
    const pixels = (glyph) => {
      context.clearRect(0, 0, 32, 32);
      context.font = "24px sans-serif";
      context.textBaseline = "top";
      context.fillText(glyph, 0, 0);
      return context.getImageData(0, 0, 32, 32).data.join(",");
    };
    const drawn = pixels(text);
    drawable.set(text, drawn !== pixels("\u{10FFFD}") && drawn !== pixels(" "));
  }
  return drawable.get(text);
}
function hideUndrawableIcons(root) {
  for (const icon of (root || document).querySelectorAll(".option-icon:not([data-checked])")) {
    icon.dataset.checked = "";
    if (!glyphDrawn(icon.textContent.trim())) icon.hidden = true;
  }
}
document.addEventListener("DOMContentLoaded", () => hideUndrawableIcons(document));
document.addEventListener("htmx:load", (event) => hideUndrawableIcons(event.target));
