// Images pasted or dropped into an answer.
// One module of the pages' script: ../hookbridge.js loads them all.

// Images with a free-text answer (questions/card.html#images-field): a screenshot pasted or dropped into the
// answer box joins the form's file field, each shown before it is sent and removable. The server checks them
// again (questions.images); here a wrong type, size or count is said at once, and nothing is sent.
const IMAGE_TYPES = ["image/png", "image/jpeg", "image/webp", "image/gif"];

function imagesField(form) { return form && form.querySelector(".images-field"); }

function showImages(field, problem) {
  const input = field.querySelector("input[type=file]");
  const list = field.querySelector(".image-previews");
  const said = field.querySelector(".image-problem");
  for (const old of list.querySelectorAll("img")) URL.revokeObjectURL(old.src);
  list.replaceChildren();
  [...input.files].forEach((file, index) => {
    const item = document.createElement("li");
    const image = document.createElement("img");
    image.src = URL.createObjectURL(file);
    image.alt = `Image ${index + 1}: ${file.name || "pasted"}`;
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "link remove-image";
    remove.textContent = "Remove";
    remove.setAttribute("aria-label", `Remove image ${index + 1}`);
    remove.addEventListener("click", () => {
      const kept = new DataTransfer();
      [...input.files].forEach((other, n) => { if (n !== index) kept.items.add(other); });
      input.files = kept.files;
      showImages(field, "");
    });
    item.append(image, remove);
    list.append(item);
  });
  said.hidden = !problem;
  said.textContent = problem || "";
  input.setAttribute("aria-invalid", problem ? "true" : "false");
}

function addImages(field, files) {
  const input = field.querySelector("input[type=file]");
  const most = Number(field.dataset.maxImages);
  const largest = Number(field.dataset.maxImageBytes);
  const all = new DataTransfer();
  for (const file of input.files) all.items.add(file);
  let problem = "";
  for (const file of files) {
    if (!IMAGE_TYPES.includes(file.type)) problem = `${file.name || "That"} is not a PNG, JPEG, WebP or GIF image.`;
    else if (file.size > largest) problem = `${file.name || "That image"} is over ${Math.round(largest / 1048576)} MB.`;
    else if (all.files.length >= most) problem = `At most ${most} images go with an answer.`;
    else all.items.add(file);
  }
  input.files = all.files;
  showImages(field, problem);
}

document.addEventListener("paste", (event) => {
  const box = event.target.closest && event.target.closest("article.question form textarea");
  const field = box && imagesField(box.form);
  const files = event.clipboardData ? [...event.clipboardData.files] : [];
  if (!field || !files.length) return;
  event.preventDefault();  // the image goes with the answer, not as its file name into the text
  addImages(field, files);
});
document.addEventListener("dragover", (event) => {
  if (event.target.closest && imagesField(event.target.closest("article.question form"))) event.preventDefault();
});
document.addEventListener("drop", (event) => {
  const field = event.target.closest && imagesField(event.target.closest("article.question form"));
  const files = event.dataTransfer ? [...event.dataTransfer.files] : [];
  if (!field || !files.length) return;
  event.preventDefault();
  addImages(field, files);
});
document.addEventListener("change", (event) => {
  const field = event.target.matches && event.target.matches(".images-field input[type=file]") && event.target.closest(".images-field");
  if (!field) return;
  const chosen = [...event.target.files];
  event.target.files = new DataTransfer().files;
  addImages(field, chosen);
});
