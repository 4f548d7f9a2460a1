import type { Clock } from "@reconcile/clock";
import type { NodeFilesystem } from "../node-filesystem.js";
import type { ContainerBehaviour } from "./container-behaviour.js";

export interface SimulatedRuntimeOptions {
  /** Seeds container and sandbox IDs, so that two nodes never share one. Default "sim". */
  seed?: string | undefined;
  /**
   * The node's pod CIDR; pods get addresses from .2 up, as host-local IPAM
   * hands them out. Two of different families, comma-separated, give each
   * pod an address of both (the second as CRI's `additional_ips`). Default
   * "10.244.0.0/24".
   */
  podCIDR?: string | undefined;
  /** The node's behaviour defaults, before pod annotations. Default: {@link defaultContainerBehaviour}. */
  defaults?: Partial<ContainerBehaviour> | undefined;
  /** Images already on the node (no pull needed). Default: none. */
  preloadedImages?: readonly string[] | undefined;
  /** Default `realClock`. */
  clock?: Clock | undefined;
  /** Runtime name in container IDs and `containerRuntimeVersion`. Default "containerd". */
  runtimeName?: string | undefined;
  /** Default "1.7.13-sim". */
  runtimeVersion?: string | undefined;
  /** The node's files, which mounts expose to containers. Default: an empty one. */
  filesystem?: NodeFilesystem | undefined;
  /**
   * Changes one container's behaviour as it is created, after the defaults
   * and the pod's annotations (simulations inject crashes here). Default: none.
   */
  behaviour?: ((container: ContainerIdentity) => Partial<ContainerBehaviour> | undefined) | undefined;
}

/** Which container {@link SimulatedRuntimeOptions.behaviour} is asked about. */
export interface ContainerIdentity {
  readonly podUid: string;
  /** The pod's `namespace/name`. */
  readonly pod: string;
  readonly name: string;
  readonly attempt: number;
  readonly image: string;
}
