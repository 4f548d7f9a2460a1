import { describeClientConformance } from "@reconcile/client/testing";
import { ApiServer } from "../api-server.js";

describeClientConformance("in-process client of ApiServer", async () => {
  const server = new ApiServer();
  return { client: server.client(), close: () => server.close() };
});
