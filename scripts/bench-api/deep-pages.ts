/**
 * Deep pages against first pages: a list's 1000th page, reached by following `nextPageToken` from
 * its first page on the running server (by offset where the API gives no token), measured beside
 * the first page at the same size, so that their p99 can be compared.
 */
import type { Operation } from "./operations.ts";

/** The page compared with the first. */
export const DEEP_PAGE = 1000;
/** The largest page size compared: a list too short for 1000 pages of it is compared at a smaller one. */
const MAX_SIZE = 20;

/** A deep page and the first page of the same list and size, compared with each other. */
export interface DeepPair {
  first: string;
  deep: string;
}

/** A list whose 1000th page is measured: `base` ends with `?` or `&`. */
export interface DeepList {
  label: string;
  base: string;
  size: number;
}

/**
 * The list at the largest page size (20 at most) that still has a 1000th page over `rows` rows;
 * undefined, with a note, when it has none even at 1 a page.
 */
export function deepList(label: string, base: string, rows: number, notes: string[]): DeepList | undefined {
  const size = Math.min(MAX_SIZE, Math.floor(rows / DEEP_PAGE));
  if (size >= 1) return { label, base, size };
  notes.push(`${label}: ${rows.toLocaleString("en")} rows hold no ${DEEP_PAGE}th page; not measured`);
  return undefined;
}

/**
 * The first and the 1000th page of each list, as operations: the 1000th reached by following
 * `nextPageToken` from the first where the API gives one, by offset where it does not.
 */
export async function deepPageOperations(
  url: string,
  apiKey: string,
  lists: readonly DeepList[],
): Promise<{ operations: Operation[]; pairs: DeepPair[]; notes: string[] }> {
  const operations: Operation[] = [];
  const pairs: DeepPair[] = [];
  const notes: string[] = [];
  const get = async (path: string): Promise<{ nextPageToken?: string }> => {
    const response = await fetch(`${url}${path}`, { headers: { "x-api-key": apiKey } });
    if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as { nextPageToken?: string };
  };
  for (const { label, base, size } of lists) {
    const firstPath = `${base}limit=${size}`;
    // An empty token is the last page's, as an absent one is.
    let token = (await get(firstPath)).nextPageToken || undefined;
    let deepPath: string;
    if (token === undefined) {
      deepPath = `${base}limit=${size}&offset=${(DEEP_PAGE - 1) * size}`;
      notes.push(`${label}: no nextPageToken; page ${DEEP_PAGE} asked for by offset`);
    } else {
      for (let page = 2; page < DEEP_PAGE && token !== undefined; page++) {
        token =
          (await get(`${base}limit=${size}&pageToken=${encodeURIComponent(token)}`)).nextPageToken ||
          undefined;
      }
      if (token === undefined) throw new Error(`${label}: the pages ended before page ${DEEP_PAGE}`);
      deepPath = `${base}limit=${size}&pageToken=${encodeURIComponent(token)}`;
      notes.push(`${label}: page ${DEEP_PAGE} reached by following nextPageToken`);
    }
    const first = `${label} page 1 (${size} a page)`;
    const deep = `${label} page ${DEEP_PAGE} (${size} a page)`;
    operations.push({ name: first, kind: "list", keyed: true, paths: [firstPath] });
    operations.push({ name: deep, kind: "list", keyed: true, paths: [deepPath] });
    pairs.push({ first, deep });
  }
  return { operations, pairs, notes };
}
