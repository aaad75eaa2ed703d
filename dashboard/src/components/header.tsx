/** The header: the way home, the search box, the newest block and whether the page is live. */
import { useState } from "preact/hooks";
import { ApiError } from "../api.ts";
import { useSession } from "../context.ts";
import { count } from "../format.ts";
import type { LiveState } from "../live.ts";
import { collectionHash, nftHash, parseSearch, walletHash } from "../route.ts";

const LIVE_TEXT: Record<LiveState, string> = {
  starting: "connecting",
  live: "live",
  paused: "paused (tab hidden)",
  offline: "API unreachable",
};

export function Header({
  block,
  live,
  onForget,
}: {
  block: number | undefined;
  live: LiveState;
  onForget(): void;
}) {
  const { client } = useSession();
  const [text, setText] = useState("");
  const [problem, setProblem] = useState("");
  const search = async () => {
    const target = parseSearch(text);
    if (target.kind === "invalid") {
      setProblem("Enter an address (0x…), or an address and a token id (0x… 123).");
      return;
    }
    setProblem("");
    if (target.kind === "nft") {
      location.hash = nftHash(target.address, target.tokenId);
      return;
    }
    // A contract Mintlens indexed is a collection; any other address is looked at as a wallet.
    try {
      await client.get(`/collections/v1beta2/${target.address}/metadata`);
      location.hash = collectionHash(target.address);
    } catch (error) {
      if (error instanceof ApiError && error.failure === "not-found")
        location.hash = walletHash(target.address);
      else setProblem(error instanceof Error ? error.message : String(error));
    }
  };
  return (
    <header class="top">
      <button type="button" class="skip" onClick={() => document.getElementById("main")?.focus()}>
        Skip to content
      </button>
      <a class="brand" href="#/">
        Mintlens
      </a>
      <form
        class="search"
        onSubmit={(event) => {
          event.preventDefault();
          void search();
        }}
      >
        <label for="search" class="visually-hidden">
          Search by address, or address and token id
        </label>
        <input
          id="search"
          type="search"
          placeholder="0x… or 0x… 123"
          spellcheck={false}
          autocomplete="off"
          value={text}
          aria-describedby={problem ? "search-problem" : undefined}
          onInput={(e) => setText(e.currentTarget.value)}
        />
        <button type="submit">Go</button>
        {problem && (
          <p id="search-problem" class="status error" role="alert">
            {problem}
          </p>
        )}
      </form>
      <p class="live" aria-live="polite" data-live={live} data-block={block}>
        <span class={`dot ${live}`} aria-hidden="true" />
        {LIVE_TEXT[live]}
        {block !== undefined && <> · block {count(block)}</>}
      </p>
      <button type="button" class="link" onClick={onForget}>
        Forget key
      </button>
    </header>
  );
}
