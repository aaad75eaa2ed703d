/**
 * The dashboard: asks for an API key once per browser session, then shows the page the URL hash
 * names, fetching its data again whenever the API reports a newer block.
 */
import "uplot/dist/uPlot.min.css";
import "./styles.css";
import { render } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { createApiClient } from "./api.ts";
import { Header } from "./components/header.tsx";
import { KEY_STORAGE, KeyForm } from "./components/key-form.tsx";
import { SessionContext } from "./context.ts";
import { type LiveState, startLive } from "./live.ts";
import { CollectionPage } from "./pages/collection.tsx";
import { NftPage } from "./pages/nft.tsx";
import { TopPage } from "./pages/top.tsx";
import { WalletPage } from "./pages/wallet.tsx";
import { parseRoute, type Route } from "./route.ts";

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case "top":
      return <TopPage metric={route.metric} duration={route.duration} />;
    case "collection":
      return <CollectionPage address={route.address} duration={route.duration} period={route.period} />;
    case "nft":
      return <NftPage address={route.address} tokenId={route.tokenId} />;
    case "wallet":
      return <WalletPage address={route.address} includeSpam={route.includeSpam} />;
    case "unknown":
      return (
        <>
          <h1>No such page</h1>
          <p>
            Nothing is at <span class="mono">{route.hash}</span>. <a href="#/">Go to the top collections</a>.
          </p>
        </>
      );
  }
}

function useHashRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const update = () => {
      setRoute(parseRoute(location.hash));
      // A new page starts at its top, with the focus where a keyboard user expects it.
      window.scrollTo(0, 0);
      document.getElementById("main")?.focus({ preventScroll: true });
    };
    addEventListener("hashchange", update);
    return () => removeEventListener("hashchange", update);
  }, []);
  return route;
}

function App() {
  const [key, setKey] = useState(() => sessionStorage.getItem(KEY_STORAGE));
  const [refused, setRefused] = useState(false);
  const [block, setBlock] = useState<number | undefined>(undefined);
  const [live, setLive] = useState<LiveState>("starting");
  const route = useHashRoute();
  const client = useMemo(
    () =>
      key === null
        ? undefined
        : createApiClient({
            key,
            onBlock: (b) => setBlock((before) => (before === undefined || b > before ? b : before)),
            onUnauthenticated: () => {
              sessionStorage.removeItem(KEY_STORAGE);
              setRefused(true);
              setKey(null);
            },
          }),
    [key],
  );
  useEffect(() => (client ? startLive(client, setLive) : undefined), [client]);
  useEffect(() => {
    const titles: Record<Route["page"], string> = {
      top: "Top collections",
      collection: "Collection",
      nft: "NFT",
      wallet: "Wallet",
      unknown: "No such page",
    };
    document.title = `${titles[route.page]} · Mintlens`;
  }, [route.page]);
  if (key === null || client === undefined) {
    return (
      <KeyForm
        refused={refused}
        onKey={(k) => {
          sessionStorage.setItem(KEY_STORAGE, k);
          setRefused(false);
          setKey(k);
        }}
      />
    );
  }
  return (
    <SessionContext.Provider value={{ client, block }}>
      <Header
        block={block}
        live={live}
        onForget={() => {
          sessionStorage.removeItem(KEY_STORAGE);
          setKey(null);
        }}
      />
      <main id="main" tabIndex={-1} data-page={route.page}>
        <Page route={route} />
      </main>
    </SessionContext.Provider>
  );
}

performance.mark("dashboard-start");
const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
