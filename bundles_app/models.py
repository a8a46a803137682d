"""A bundle imported from another instance (issue 34, part 5): what came, from where, when and by whom. Its rows
are ordinary sessions, runs, tasks, checkpoints, ... with new local ids, marked read-only by harness.ImportedRow."""

from django.db import models

from harness.models import Project


class ImportedBundle(models.Model):
    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="imported_bundles")
    digest = models.CharField(max_length=64, help_text="The bundle's SHA-256 over its canonical JSON.")
    kind = models.CharField(max_length=16, help_text="What was exported: run, session or task.")
    root_source_id = models.BigIntegerField(help_text="The exported run's (session's, task's) id at the source.")
    root_local_id = models.BigIntegerField(help_text="Its id here.")
    source = models.CharField(max_length=200, help_text="The exporting instance and project.")
    exported_at = models.DateTimeField()
    exported_by = models.CharField(max_length=200)
    imported_at = models.DateTimeField(auto_now_add=True)
    imported_by = models.CharField(max_length=200)
    manifest = models.JSONField()
    # What the bundle carries that is not made a row here: the memory its runs read (never live memory in this
    # instance) and the source's audit entries about it (another chain's, so never entries of this one).
    memory = models.JSONField(default=list, blank=True)
    audit = models.JSONField(default=list, blank=True)
    id_map = models.JSONField(default=dict, blank=True, help_text="kind -> {source id: local id}.")

    class Meta:
        ordering = ["-imported_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["project", "digest"], name="bundle_imported_once")]

    def __str__(self) -> str:
        return f"{self.kind} {self.root_source_id} from {self.source}"
