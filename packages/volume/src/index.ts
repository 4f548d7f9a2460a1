export {
  defaultClassAnnotation,
  PersistentVolumeController,
  type PersistentVolumeControllerOptions,
  simulatedProvisioner,
} from "./persistent-volume-controller.js";
