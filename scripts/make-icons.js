// Draws the add-in's icons (a green sheet with a table grid) as PNGs, without any image library.
// Run once: `node scripts/make-icons.js`; the PNGs are committed in assets/.
const fs = require("fs");
const path = require("path");
const zlib = require("zlib");

function crc32(buf) {
  let c, crc = 0xffffffff;
  for (let n = 0; n < buf.length; n++) {
    c = (crc ^ buf[n]) & 0xff;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    crc = (crc >>> 8) ^ c;
  }
  return (crc ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const len = Buffer.alloc(4); len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4); crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}
function png(size, pixel) {
  const raw = Buffer.alloc((size * 4 + 1) * size);
  for (let y = 0; y < size; y++) {
    raw[y * (size * 4 + 1)] = 0;
    for (let x = 0; x < size; x++) raw.set(pixel(x, y, size), y * (size * 4 + 1) + 1 + x * 4);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0); ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8; ihdr[9] = 6; ihdr[10] = 0; ihdr[11] = 0; ihdr[12] = 0;
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk("IHDR", ihdr),
    chunk("IDAT", zlib.deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]);
}
function pixel(x, y, s) {
  const m = Math.max(0.75, s / 64);
  const r = Math.round(s / 6);
  // rounded square
  const cx = Math.min(Math.max(x, r), s - 1 - r), cy = Math.min(Math.max(y, r), s - 1 - r);
  if ((x - cx) ** 2 + (y - cy) ** 2 > r * r) return [0, 0, 0, 0];
  const green = [16, 124, 65, 255], white = [255, 255, 255, 255], pale = [200, 230, 210, 255];
  const inner = s * 0.2, outer = s * 0.8;
  if (x >= inner && x < outer && y >= inner && y < outer) {
    const gx = (x - inner) / (outer - inner), gy = (y - inner) / (outer - inner);
    const onGrid = [0, 1 / 3, 2 / 3].some((g) => Math.abs(gx - g) * (outer - inner) < m) ||
      [0, 0.25, 0.5, 0.75].some((g) => Math.abs(gy - g) * (outer - inner) < m) ||
      Math.abs(gx - 1) * (outer - inner) < m + 0.5 || Math.abs(gy - 1) * (outer - inner) < m + 0.5;
    if (onGrid) return green;
    return gy < 0.25 ? pale : white;
  }
  return green;
}
for (const size of [16, 32, 64, 80, 128]) {
  fs.writeFileSync(path.join(__dirname, "..", "assets", `icon-${size}.png`), png(size, pixel));
}
console.log("icons written to assets/");
