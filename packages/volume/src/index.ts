export {
  defaultClassAnnotation,
  PersistentVolumeController,
  type PersistentVolumeControllerOptions,
  simulatedProvisioner,
} from "./persistent-volume-controller.js";
export {
  PVCProtectionController,
  type PVCProtectionControllerOptions,
  PVProtectionController,
  type PVProtectionControllerOptions,
  pvcProtectionFinalizer,
  pvProtectionFinalizer,
} from "./protection-controllers.js";
