// The pages' script, one ES module per feature (hb/), loaded as a module: no build step, and the CSP's
// script-src 'self' serves them as it served one file. Each module adds its own listeners when it is loaded;
// they import from one another only what they share.
import "./hb/connection.js";
import "./hb/clocks.js";
import "./hb/filters.js";
import "./hb/cards.js";
import "./hb/keyboard.js";
import "./hb/replies.js";
import "./hb/images.js";
import "./hb/sending.js";
import "./hb/triage.js";
import "./hb/batch.js";
import "./hb/icons.js";
