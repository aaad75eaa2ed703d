/**
 * The form that asks for the API key. The key stays in this tab's sessionStorage, is sent only in
 * the `X-API-Key` header, and never goes into a URL: a shared link carries no key.
 */
import { useState } from "preact/hooks";

export const KEY_STORAGE = "mintlens.apiKey";

export function KeyForm({ refused, onKey }: { refused: boolean; onKey(key: string): void }) {
  const [key, setKey] = useState("");
  return (
    <main id="main" class="key-page">
      <h1>Mintlens dashboard</h1>
      <form
        class="key-form"
        onSubmit={(event) => {
          event.preventDefault();
          if (key.trim() !== "") onKey(key.trim());
        }}
      >
        <p>
          The dashboard reads the Mintlens API with your API key. It is kept in this browser tab only, until
          you close it, and is sent to this server alone.
        </p>
        {refused && (
          <p class="status error" role="alert" id="key-error">
            The API refused that key (401: not valid or revoked). Check it and enter it again.
          </p>
        )}
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          required
          aria-describedby={refused ? "key-error" : undefined}
          value={key}
          onInput={(event) => setKey(event.currentTarget.value)}
        />
        <button type="submit">Use this key</button>
        <p class="hint">
          <code>npm start</code> prints a key for the demo; <code>mintlens keys create {"<user>"}</code> makes
          one.
        </p>
      </form>
    </main>
  );
}
