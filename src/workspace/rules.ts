import { DATASET_TYPES, PROJECT_TYPES, type DatasetType, type ProjectType } from './types.js';

/**
 * PaddleX's running code stores project-type names in Dataset.type; the proto comment's names
 * are what ragloom writes. detection is the VOC importer, instance_segmentation the COCO one;
 * remote_segmentation has no importer and is segmentation data.
 */
export const LEGACY_DATASET_TYPES: Readonly<Record<string, DatasetType>> = {
  detection: 'detection_voc',
  instance_segmentation: 'detection_coco',
  remote_segmentation: 'segmentation',
};

/**
 * Project types each dataset type may be bound to (proto comment). remote_segmentation
 * projects take segmentation data, as the PaddleX UI offers them remote_segmentation datasets.
 */
export const COMPATIBLE_PROJECT_TYPES: Readonly<Record<DatasetType, readonly ProjectType[]>> = {
  classification: ['classification'],
  segmentation: ['segmentation', 'remote_segmentation'],
  detection_voc: ['detection'],
  detection_coco: ['detection', 'segmentation', 'instance_segmentation'],
};

export const isDatasetType = (t: string): t is DatasetType => (DATASET_TYPES as readonly string[]).includes(t);
export const isProjectType = (t: string): t is ProjectType => (PROJECT_TYPES as readonly string[]).includes(t);

/** The ragloom name of a stored dataset type; unknown strings are returned unchanged. */
export const canonicalDatasetType = (t: string): string => LEGACY_DATASET_TYPES[t] ?? t;

export function compatible(datasetType: string, projectType: string): boolean {
  const t = canonicalDatasetType(datasetType);
  return isDatasetType(t) && (COMPATIBLE_PROJECT_TYPES[t] as readonly string[]).includes(projectType);
}
