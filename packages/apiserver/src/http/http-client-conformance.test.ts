import { HttpClient, loadKubeConfig } from "@reconcile/client";
import { describeClientConformance } from "@reconcile/client/testing";
import { ApiServer } from "../api-server.js";
import { listen } from "./server.js";

// The shared Client behaviour, through the HTTP client against the embedded server over HTTP.
describeClientConformance("HttpClient against the embedded server over HTTP", async () => {
  const api = new ApiServer();
  const server = await listen(api);
  const client = new HttpClient({
    kubeConfig: await loadKubeConfig({ yaml: server.kubeconfig() }),
    qps: Number.POSITIVE_INFINITY,
  });
  return {
    client,
    close: async () => {
      client.close();
      await server.close();
      await api.close();
    },
  };
});
