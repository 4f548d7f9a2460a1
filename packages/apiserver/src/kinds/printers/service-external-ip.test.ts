// The Service External-IP cell, after upstream's printers_test.go TestPrintService cases.
import { describe, expect, it } from "vitest";
import { serviceExternalIP } from "./core.js";

describe("Service External-IP (upstream getServiceExternalIP)", () => {
  it.each([
    { name: "ClusterIP without external IPs", service: { spec: { type: "ClusterIP" } }, want: "<none>" },
    { name: "no type is ClusterIP", service: { spec: {} }, want: "<none>" },
    {
      name: "NodePort with external IPs",
      service: { spec: { type: "NodePort", externalIPs: ["1.2.3.4", "5.6.7.8"] } },
      want: "1.2.3.4,5.6.7.8",
    },
    {
      name: "a LoadBalancer not yet given an address",
      service: { spec: { type: "LoadBalancer" } },
      want: "<pending>",
    },
    {
      name: "a LoadBalancer's ingress: IPs or hostnames, sorted and distinct",
      service: {
        spec: { type: "LoadBalancer" },
        status: {
          loadBalancer: {
            ingress: [
              { ip: "3.4.5.6" },
              { hostname: "lb.example.com" },
              { ip: "2.3.4.5" },
              { ip: "3.4.5.6" },
            ],
          },
        },
      },
      want: "2.3.4.5,3.4.5.6,lb.example.com",
    },
    {
      name: "a LoadBalancer's ingress, then its external IPs",
      service: {
        spec: { type: "LoadBalancer", externalIPs: ["9.9.9.9"] },
        status: { loadBalancer: { ingress: [{ ip: "2.3.4.5" }] } },
      },
      want: "2.3.4.5,9.9.9.9",
    },
    {
      name: "ExternalName shows the name",
      service: { spec: { type: "ExternalName", externalName: "my.database.example.com" } },
      want: "my.database.example.com",
    },
  ])("$name", ({ service, want }) => {
    expect(serviceExternalIP(service)).toBe(want);
  });
});
