/** The workflows a mempalace worker registers (its `workflowsPath` bundle entry). */
export { deleteBySourceWorkflow } from './delete-by-source/workflow.js';
export { mineWorkflow } from './mine/workflow.js';
export { reembedWorkflow } from './reembed/workflow.js';
export { revertWorkflow } from './revert/workflow.js';
export { syncWorkflow } from './sync/workflow.js';
