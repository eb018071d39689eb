import protobuf from 'protobufjs';

/**
 * The text of `workspace.proto`, kept here because tsc does not copy `.proto` files into
 * `dist/`. test/workspace/schema.test.ts fails if the two drift apart.
 */
export const PROTO_TEXT = `// ragloom/workspace: the PaddleX RESTful/GUI workspace record model.
//
// Wire-compatible with PaddleX's paddlex/restful/workspace.proto (v1.3 .. 2.1.1):
// same package, message names, field names, numbers and types. Every field is
// proto3 implicit-presence, so empty strings and zero ints are not written.
// src/workspace/schema.ts holds a byte-identical copy of this text (tsc does
// not copy .proto files into dist/); test/workspace/schema.test.ts keeps the
// two in step.
syntax = "proto3";
package suitebackend;

message Dataset {
    string id = 1;
    string name = 2;
    string desc = 3;
    // classification | segmentation | detection_voc | detection_coco.
    // PaddleX's running code stores classification | detection | segmentation |
    // instance_segmentation | remote_segmentation here instead.
    string type = 4;
    string path = 5;
    string create_time = 6;
}

message Project {
    string id = 1;
    string name = 2;
    string desc = 3;
    // classification | detection | segmentation | instance_segmentation |
    // remote_segmentation
    string type = 4;
    // Bound dataset id, "" until bound.
    string did = 5;
    string path = 6;
    string create_time = 7;
}

message Task {
    string id = 1;
    string name = 2;
    string desc = 3;
    // Owning project id.
    string pid = 4;
    string path = 5;
    string create_time = 6;
    // Parent task of a prune-retrain task, "" for ordinary training.
    string parent_id = 7;
}

message PretrainedModel {
    string id = 1;
    string name = 2;
    string model = 3;
    string type = 4;
    // Owning project id.
    string pid = 5;
    string tid = 6;
    string create_time = 7;
    string path = 8;
}

message ExportedModel {
    string id = 1;
    string name = 2;
    string model = 3;
    string type = 4;
    // Owning project id.
    string pid = 5;
    string tid = 6;
    string create_time = 7;
    string path = 8;
    // 0 = inference (server) model, 1 = lite model.
    int32 exported_type = 9;
}

message Workspace {
    string version = 1;
    string path = 2;
    map<string, Dataset> datasets = 3;
    map<string, Project> projects = 4;
    map<string, Task> tasks = 5;
    int32 max_dataset_id = 6;
    int32 max_project_id = 7;
    int32 max_task_id = 8;
    string current_time = 9;
    int32 max_pretrained_model_id = 10;
    map<string, PretrainedModel> pretrained_models = 11;
    int32 max_exported_model_id = 12;
    map<string, ExportedModel> exported_models = 13;
}
`;

// keepCase: the record fields keep the proto's snake_case names, as PaddleX's Python does.
const root = protobuf.parse(PROTO_TEXT, { keepCase: true }).root;

/** Reflected message types of `package suitebackend`. */
export const MessageTypes = {
  Dataset: root.lookupType('suitebackend.Dataset'),
  Project: root.lookupType('suitebackend.Project'),
  Task: root.lookupType('suitebackend.Task'),
  PretrainedModel: root.lookupType('suitebackend.PretrainedModel'),
  ExportedModel: root.lookupType('suitebackend.ExportedModel'),
  Workspace: root.lookupType('suitebackend.Workspace'),
} as const;
