/** Small pieces the pages share: links to addresses and tokens, labels, and what a load shows. */
import type { ComponentChildren } from "preact";
import type { ApiError } from "../api.ts";
import { enumWords, shortAddress, shortToken } from "../format.ts";
import { collectionHash, nftHash, walletHash } from "../route.ts";

export function WalletLink({ address }: { address: string }) {
  return (
    <a href={walletHash(address)} class="mono" title={address}>
      {shortAddress(address)}
    </a>
  );
}

export function CollectionLink({ address, name }: { address: string; name?: string | undefined }) {
  return (
    <a href={collectionHash(address)} title={address}>
      {name || <span class="mono">{shortAddress(address)}</span>}
    </a>
  );
}

export function TokenLink({ address, tokenId }: { address: string; tokenId: string }) {
  return (
    <a href={nftHash(address, tokenId)} class="mono" title={`${address} #${tokenId}`}>
      #{shortToken(tokenId)}
    </a>
  );
}

/** Labels that tell a sale's nature, the ones a reader looks for first. */
const TONE: Record<string, string> = {
  LABEL_ORGANIC: "good",
  LABEL_WASH: "bad",
  LABEL_SPAM: "bad",
  LABEL_RATE_OUTLIER: "warn",
  LABEL_UNPRICED: "warn",
};

export function Labels({ labels }: { labels: readonly string[] }) {
  return (
    <ul class="labels">
      {labels.map((label) => (
        <li key={label} class={`label ${TONE[label] ?? ""}`}>
          {enumWords(label, "LABEL_")}
        </li>
      ))}
    </ul>
  );
}

export function SpamBadge({
  spam,
}: {
  spam: { isSpam: boolean; score: number; source: string } | undefined | null;
}) {
  if (
    !spam ||
    spam.source === "SPAM_VERDICT_SOURCE_NOT_JUDGED" ||
    spam.source === "SPAM_VERDICT_SOURCE_UNSPECIFIED"
  )
    return <span class="label">not judged for spam</span>;
  return spam.isSpam ? (
    <span class="label bad">spam (score {spam.score})</span>
  ) : (
    <span class="label good">not spam (score {spam.score})</span>
  );
}

/**
 * What a part of a page shows while its data is not there: loading, the error in plain words,
 * or its children once it has data.
 */
export function Load({
  loading,
  error,
  what,
  children,
}: {
  loading: boolean;
  error: ApiError | undefined;
  what: string;
  children: ComponentChildren;
}) {
  if (loading) return <p class="status">Loading {what}…</p>;
  if (error && error.failure !== "not-found")
    return (
      <p class="status error" role="alert">
        Could not load {what}: {error.message}
      </p>
    );
  return <>{children}</>;
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/** A labelled choice among an enum's values, each shown in words (its prefix left out). */
export function Picker<T extends string>({
  label,
  value,
  values,
  prefix,
  onPick,
}: {
  label: string;
  value: T;
  values: readonly T[];
  prefix: string;
  onPick: (value: T) => void;
}) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onPick(e.currentTarget.value as T)}>
        {values.map((v) => (
          <option key={v} value={v}>
            {enumWords(v, prefix)}
          </option>
        ))}
      </select>
    </label>
  );
}
