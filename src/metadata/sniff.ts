/**
 * A document's media type from its first bytes, not from what the server or the URI claims:
 * servers call JSON `text/plain` and images `application/octet-stream`, and a claimed type must
 * not decide how the bytes are served back. Pure.
 */
import { scanJson } from "./json-scan.ts";

const startsWith = (bytes: Uint8Array, prefix: readonly number[], at = 0) =>
  prefix.every((b, i) => bytes[at + i] === b);

const ascii = (bytes: Uint8Array, from: number, to: number) =>
  String.fromCharCode(...bytes.subarray(from, Math.min(to, bytes.length)));

/** Images, video, sound and 3D models: media a document names, or a token URI that is one itself. */
export const isMediaType = (mimeType: string) =>
  mimeType.startsWith("image/") ||
  mimeType.startsWith("video/") ||
  mimeType.startsWith("audio/") ||
  mimeType.startsWith("model/");

/** The media type of `bytes`; `declared` (lowercase, without parameters) only breaks ties among text types. */
export function sniffMediaType(bytes: Uint8Array, declared = ""): string {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg";
  if (ascii(bytes, 0, 6) === "GIF87a" || ascii(bytes, 0, 6) === "GIF89a") return "image/gif";
  if (ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 12) === "WEBP") return "image/webp";
  if (ascii(bytes, 4, 8) === "ftyp") {
    const brand = ascii(bytes, 8, 12);
    return brand.startsWith("avif") || brand === "avis" ? "image/avif" : "video/mp4";
  }
  if (startsWith(bytes, [0x1a, 0x45, 0xdf, 0xa3])) return "video/webm";
  if (ascii(bytes, 0, 2) === "BM") return "image/bmp";
  if (ascii(bytes, 0, 3) === "ID3" || startsWith(bytes, [0xff, 0xfb])) return "audio/mpeg";
  if (ascii(bytes, 0, 4) === "glTF") return "model/gltf-binary";

  const text = new TextDecoder("utf-8", { fatal: false })
    .decode(bytes.subarray(0, 1024))
    .replace(/^\uFEFF/, "");
  const head = text.trimStart();
  if (head.startsWith("{") || head.startsWith("[")) {
    // Checked without being parsed: a hostile document costs nothing here.
    if (scanJson(new TextDecoder().decode(bytes)) !== undefined) return "application/json";
  }
  const lower = head.slice(0, 512).toLowerCase();
  if (/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!doctype svg[^>]*>\s*)?<svg[\s>]/.test(lower))
    return "image/svg+xml";
  if (lower.startsWith("<!doctype html") || lower.startsWith("<html")) return "text/html";
  if (isText(bytes)) return declared.startsWith("text/") ? declared : "text/plain";
  return "application/octet-stream";
}

/**
 * Valid UTF-8 without control characters other than whitespace and NUL, in the first 1 KiB (a NUL
 * pads strings contracts build from bytes32; the document keeps its text).
 */
function isText(bytes: Uint8Array): boolean {
  const sample = bytes.subarray(0, 1024);
  try {
    const decoded = new TextDecoder("utf-8", { fatal: true }).decode(sample);
    for (let i = 0; i < decoded.length; i++) {
      const c = decoded.charCodeAt(i);
      // Tab, line feed, vertical tab, form feed, carriage return and NUL are text; other controls are not.
      if (c > 0x00 && c < 0x20 && (c < 0x09 || c > 0x0d)) return false;
    }
    return true;
  } catch {
    // A sample cut inside a multi-byte character is still text.
    return sample.length === 1024;
  }
}
