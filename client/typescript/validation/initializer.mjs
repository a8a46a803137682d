// LangGraph.js's own checkpointer validation suite (@langchain/langgraph-checkpoint-validation) on HarnessSaver,
// against the live server tests/client/test_typescript.py starts (HARNESS_URL, HARNESS_TOKEN of a fresh project).
// The suite wants each checkpointer it makes to see only what it wrote: this one deletes its threads when destroyed.
import { HarnessClient, RetryPolicy } from "../dist/src/index.js";
import { HarnessSaver } from "../dist/src/langgraph.js";

class TrackedSaver extends HarnessSaver {
  threads = new Set();

  async put(config, checkpoint, metadata, newVersions) {
    this.threads.add(String(config.configurable?.thread_id));
    return super.put(config, checkpoint, metadata, newVersions);
  }
}

export default {
  checkpointerName: "HarnessSaver",
  createCheckpointer() {
    return new TrackedSaver({ client: new HarnessClient({ retry: new RetryPolicy({ baseDelay: 0.01, maxDelay: 0.05 }) }) });
  },
  async destroyCheckpointer(saver) {
    for (const thread of saver.threads) await saver.deleteThread(thread);
  },
};
