import { afterEach, describe, expect, it } from "vitest";
import { closeKubectlClusters, kubectlCluster } from "../../testing/kubectl.js";

// What kubectl prints of webhook and policy refusals and warnings, and of a CRD object read at two versions.

afterEach(closeKubectlClusters);

const webhookConfiguration = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: no-secrets-in-configmaps
webhooks:
- name: configmaps.example.com
  clientConfig:
    url: https://hooks.local/validate
  rules:
  - operations: ["CREATE"]
    apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["configmaps"]
  sideEffects: None
  admissionReviewVersions: ["v1"]
`;

const policy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: replica-limit
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= 5"
    message: "at most 5 replicas"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: replica-limit
spec:
  policyName: replica-limit
  validationActions: ["Deny"]
`;

describe("kubectl and admission webhooks and policies", () => {
  it("prints a webhook's refusal and its warnings as a cluster's, and lists the configuration", async () => {
    const { api, kubectl, file } = await kubectlCluster({ kubernetesService: false });
    api.admissionWebhooks.serve("https://hooks.local/validate", (review) => {
      const request = review.request as { uid: string; object: { data?: Record<string, string> } };
      const secret = request.object.data?.password !== undefined;
      return {
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        response: secret
          ? {
              uid: request.uid,
              allowed: false,
              status: { code: 403, reason: "Forbidden", message: "passwords belong in Secrets" },
            }
          : {
              uid: request.uid,
              allowed: true,
              warnings: ["configmaps are checked by configmaps.example.com"],
            },
      };
    });
    expect((await kubectl(["apply", "-f", await file("hook.yaml", webhookConfiguration)])).code).toBe(0);
    const listed = await kubectl(["get", "validatingwebhookconfigurations", "--no-headers"]);
    expect(listed.stdout).toMatch(/^no-secrets-in-configmaps\s+1\s+\S+\n$/);
    const refused = await kubectl(["create", "configmap", "c", "--from-literal=password=x"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      'error: failed to create configmap: admission webhook "configmaps.example.com" denied the request: passwords belong in Secrets\n',
    );
    const warned = await kubectl(["create", "configmap", "d", "--from-literal=a=b"]);
    expect(warned.code).toBe(0);
    expect(warned.stderr).toBe("Warning: configmaps are checked by configmaps.example.com\n");
  });

  it("prints a ValidatingAdmissionPolicy's refusal as a cluster's", async () => {
    const { kubectl, file } = await kubectlCluster({ kubernetesService: false });
    expect((await kubectl(["apply", "-f", await file("policy.yaml", policy)])).code).toBe(0);
    const bindings = await kubectl(["get", "validatingadmissionpolicybindings", "--no-headers"]);
    expect(bindings.stdout).toMatch(/^replica-limit\s+replica-limit\s+<unset>\s+\S+\n$/);
    const refused = await kubectl(["create", "deployment", "web", "--image=nginx", "--replicas=6"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      "error: failed to create deployment: deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit' denied request: at most 5 replicas\n",
    );
    expect((await kubectl(["create", "deployment", "web", "--image=nginx", "--replicas=2"])).code).toBe(0);
  });
});
