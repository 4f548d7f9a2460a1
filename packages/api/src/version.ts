/**
 * The Kubernetes release whose behaviour this project follows: what the API
 * server's `/version` reports and what the simulated kubelets give as
 * `nodeInfo.kubeletVersion`, so `kubectl get nodes` shows the server's version.
 */
export const kubernetesVersion = { major: "1", minor: "32", gitVersion: "v1.32.0" } as const;
