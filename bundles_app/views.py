"""The console's doors to bundles: the export button on a run's, session's or task's page (a CSRF form that
downloads the bundle), and /bundles/: the imported bundles, and the form that imports one (a file)."""

from django import forms
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from bundles_app.bundle import ROOT_KINDS, dumps, loads
from bundles_app.models import ImportedBundle
from bundles_app.services import bundle_export, bundle_import, project_of_root
from harness.actors import Actor
from harness.http.errors import DomainError, Forbidden
from harness.http.views import ConsoleRequest, console_page, project_ids, render_page, role_required
from harness.tenancy import Role

_ROOT_URL = {"run": "runs:run_inspector", "session": "sessions:session_timeline", "task": "runs:task_detail"}


class ImportForm(forms.Form):
    project = forms.SlugField(max_length=64, help_text="The project it lands in (an admin may name a new one).")
    bundle = forms.FileField(help_text="A bundle exported by another instance (.json or .json.gz).")


@require_POST
@console_page
@role_required(Role.OPERATOR)
def bundle_export_view(request: ConsoleRequest, kind: str, root_id: int) -> HttpResponse:
    if kind not in ROOT_KINDS:
        raise Http404("Export a run, a session or a task.")
    project = project_of_root(project_ids=project_ids(request), kind=kind, root_id=root_id)
    try:
        bundle = bundle_export(project=project, actor=Actor.of(request.user), kind=kind, root_id=root_id)
    except Forbidden as exc:
        raise PermissionDenied(exc.detail) from None
    response = HttpResponse(dumps(bundle), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-{kind}-{root_id}.bundle.json"'
    return response


@require_http_methods(["GET", "POST"])
@console_page
@role_required(Role.OPERATOR)
def bundle_list(request: ConsoleRequest) -> HttpResponse:
    posted = request.method == "POST"
    form = ImportForm(request.POST, request.FILES) if posted else ImportForm()
    context: dict[str, object] = {"form": form, "error": "", "error_code": "",
                                  "bundles": ImportedBundle.objects.filter(project_id__in=project_ids(request))
                                  .select_related("project")[:100]}
    if not posted:
        return render_page(request, "bundles/bundle_list.html", context)
    if not form.is_valid():
        return render_page(request, "bundles/bundle_list.html", context, status=400)
    upload = form.cleaned_data["bundle"]
    try:
        done = bundle_import(bundle=loads(upload.read()), actor=Actor.of(request.user),
                             project_slug=form.cleaned_data["project"])
    except Forbidden as exc:
        raise PermissionDenied(exc.detail) from None
    except DomainError as exc:
        context.update(error=exc.detail, error_code=exc.code)
        return render_page(request, "bundles/bundle_list.html", context, status=exc.http_status)
    return redirect(reverse(_ROOT_URL[done.bundle.kind], args=[done.root_local_id]))


@require_GET
@console_page
@role_required(Role.OPERATOR)
def bundle_detail(request: ConsoleRequest, bundle_id: int) -> HttpResponse:
    bundle = ImportedBundle.objects.filter(pk=bundle_id, project_id__in=project_ids(request)).select_related(
        "project").first()
    if bundle is None:
        raise Http404("No such bundle.")
    root_url = reverse(_ROOT_URL[bundle.kind], args=[bundle.root_local_id])
    counts = sorted((bundle.manifest.get("counts") or {}).items())  # a dict with an "items" key: not for a template
    return render_page(request, "bundles/bundle_detail.html", {"bundle": bundle, "root_url": root_url,
                                                               "counts": counts})
