"""Console pages for memory curation. Every write calls memory_app.services."""

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from harness.actors import Actor
from harness.http.errors import DomainError, Forbidden, NotFoundError
from harness.http.views import (
    ConsoleRequest,
    console_page,
    project_ids,
    project_roles,
    render_page,
    role_required,
)
from harness.tenancy import Role, role_project_ids
from memory_app import selectors as sel
from memory_app import services
from memory_app.filters import MemoryListFilter
from memory_app.forms import BulkForm, DeleteForm, ResolveForm, ReviewForm, SupersedeForm
from memory_app.models import MemoryRecord, MemoryStatus
from memory_app.selectors import is_fresh, memory_chain, memory_conflicts_of


@require_GET
@console_page
def record_list(request: ConsoleRequest) -> HttpResponse:
    filters = MemoryListFilter(request.GET or None)
    records = sel.memory_list(project_ids=project_ids(request))
    if filters.is_bound and filters.is_valid():  # a bad value in any filter shows the whole list
        records = filters.filter_queryset(records)
    page = Paginator(records, 50).get_page(request.GET.get("page"))
    params = request.GET.copy()
    params.pop("page", None)
    params.pop("part", None)
    return render_page(
        request,
        "memory/record_list.html",
        {"form": filters.form, "page": page, "query": params.urlencode(), "bulk_form": BulkForm()},
        partials=("record-table",),
    )


@require_GET
@console_page
def record_detail(request: ConsoleRequest, record_id: int) -> HttpResponse:
    record = sel.memory_get(project_ids=project_ids(request), record_id=record_id)
    return render_page(request, "memory/record_detail.html",
                       {**_detail_context(record), "roles": project_roles(request, record.project_id)},
                       partials=("record-card",))


def _detail_context(record: MemoryRecord, **extra: Any) -> dict[str, Any]:
    chain = memory_chain(project=record.project_id, record_id=record.pk)
    conflicts = memory_conflicts_of(project=record.project_id, record=record) if record.status == "active" else []
    return {
        "record": record,
        "chain": chain.versions,
        "conflicts": conflicts,
        "fresh": is_fresh(record),
        "editable": record.status == MemoryStatus.ACTIVE,
        "deletable": record.status != MemoryStatus.DELETED,
        "supersede_form": extra.pop("supersede_form", None)
        or SupersedeForm(initial={"version": record.version, "content": record.content}),
        **extra,
    }


@require_http_methods(["GET", "POST"])
@console_page
def record_edit(request: ConsoleRequest, record_id: int) -> HttpResponse:
    """GET: the inline edit form (a partial of the detail page). POST: supersede with the new content."""
    record = sel.memory_get(project_ids=project_ids(request), record_id=record_id)
    if request.method == "GET":
        return render_page(
            request, "memory/record_detail.html",
            {**_detail_context(record, editing=True), "roles": project_roles(request, record.project_id)},
            partials=("record-card",))
    if not _can_curate(request, record.project_id):
        raise PermissionDenied("Only operators curate memory.")
    form = SupersedeForm(request.POST)
    if not form.is_valid():
        return _card(request, record, status=400, editing=True, supersede_form=form)
    try:
        successor = services.memory_supersede(
            project=record.project_id,
            record_id=record.pk,
            content=form.cleaned_data["content"],
            actor=Actor.of(request.user),
            expected_version=form.cleaned_data["version"],
            reason=form.cleaned_data["reason"],
        )
    except Forbidden as exc:
        raise PermissionDenied(exc.detail) from None
    except NotFoundError:
        raise Http404("No such memory record.") from None
    except DomainError as exc:
        current = sel.memory_get(project_ids=project_ids(request), record_id=record_id)
        return _card(request, current, status=409, editing=True, supersede_form=form, error=exc.detail)
    if request.htmx:
        standing = sel.memory_get(project_ids=project_ids(request), record_id=successor.pk)
        response = _card(request, standing, status=200, superseded=record)
        response["HX-Push-Url"] = reverse("memory:record_detail", args=[successor.pk])
        return response
    messages.success(request, f"Record {record.pk} is superseded by {successor.pk}.")
    return redirect("memory:record_detail", successor.pk)


def _card(request: ConsoleRequest, record: MemoryRecord, *, status: int, **extra: Any) -> HttpResponse:
    context = {**_detail_context(record, **extra), "roles": project_roles(request, record.project_id)}
    if request.htmx:
        # htmx 2 swaps only 2xx by default; the card carries its own errors.
        return render_page(request, "memory/record_detail.html", context, part="record-card")
    return render_page(request, "memory/record_detail.html", context, status=status)


def _can_curate(request: ConsoleRequest, project_id: int) -> bool:
    return project_roles(request, project_id)[Role.OPERATOR]


@require_POST
@console_page
@role_required(Role.OPERATOR)
def record_resolve(request: ConsoleRequest, record_id: int) -> HttpResponse:
    """Resolve a conflict by keeping another active record of the same subject: this one is superseded by it."""
    record = sel.memory_get(project_ids=project_ids(request), record_id=record_id)
    form = ResolveForm(request.POST)
    if not form.is_valid():
        return _card(request, record, status=400, error="Choose the record to keep.")
    try:
        kept = services.memory_supersede(
            project=record.project_id, actor=Actor.of(request.user), record_id=record.pk,
            replacement_id=form.cleaned_data["keep"], expected_version=form.cleaned_data["version"],
        )
    except Forbidden as exc:
        raise PermissionDenied(exc.detail) from None
    except NotFoundError:
        raise Http404("No such memory record.") from None
    except DomainError as exc:
        current = sel.memory_get(project_ids=project_ids(request), record_id=record_id)
        return _card(request, current, status=409, error=exc.detail)
    messages.success(request, f"Record {record.pk} is superseded by {kept.pk}.")
    return redirect("memory:record_detail", kept.pk)


@require_http_methods(["GET", "POST"])
@console_page
def record_delete(request: ConsoleRequest, record_id: int) -> HttpResponse:
    """GET: the confirmation page. POST (with the box ticked): tombstone the record."""
    record = sel.memory_get(project_ids=project_ids(request), record_id=record_id)
    if request.method == "GET":
        return render_page(request, "memory/record_delete.html", {
            "record": record, "roles": project_roles(request, record.project_id),
            "form": DeleteForm(initial={"version": record.version})})
    if not _can_curate(request, record.project_id):
        raise PermissionDenied("Only operators curate memory.")
    form = DeleteForm(request.POST)
    if not form.is_valid():
        return render_page(request, "memory/record_delete.html", {"record": record, "form": form}, status=400)
    try:
        services.memory_delete(
            project=record.project_id, actor=Actor.of(request.user), record_id=record.pk,
            expected_version=form.cleaned_data["version"], reason=form.cleaned_data["reason"],
        )
    except Forbidden as exc:
        raise PermissionDenied(exc.detail) from None
    except DomainError as exc:
        return render_page(
            request, "memory/record_delete.html", {"record": record, "form": form, "error": exc.detail}, status=409
        )
    messages.success(request, f"Record {record.pk} is deleted (a tombstone keeps who and when).")
    return redirect("memory:record_detail", record.pk)


@require_POST
@console_page
@role_required(Role.OPERATOR)
def record_bulk(request: ConsoleRequest) -> HttpResponse:
    """Delete or expire many records; only records in the user's projects are touched."""
    form = BulkForm(request.POST)
    back = reverse("memory:record_list") + ("?" + request.POST["query"] if request.POST.get("query") else "")
    if not form.is_valid():
        messages.error(request, " ".join(str(e) for errors in form.errors.values() for e in errors))
        return redirect(back)
    by_project: dict[int, list[int]] = {}
    # Only the records of projects where the user curates (issue 17); the others are left as they are.
    curated = role_project_ids(request.user, Role.OPERATOR, project_ids(request))
    visible = sel.memory_list(project_ids=curated).filter(pk__in=form.cleaned_data["ids"])
    for pk, project_id in visible.values_list("pk", "project_id"):
        by_project.setdefault(project_id, []).append(pk)
    deleting = form.cleaned_data["action"] == "delete"
    done, refused = 0, 0
    for project_id, ids in by_project.items():
        actor = Actor.of(request.user)
        result = (services.memory_bulk_delete(project=project_id, actor=actor, record_ids=ids,
                                              reason=form.cleaned_data["reason"]) if deleting
                  else services.memory_bulk_expire(project=project_id, actor=actor, record_ids=ids))
        done += len(result.done)
        refused += len(result.failed)
    verb = "deleted" if form.cleaned_data["action"] == "delete" else "expired"
    messages.success(request, f"{done} record{'s' if done != 1 else ''} {verb}.")
    if refused:
        messages.warning(request, f"{refused} could not be {verb} (already changed).")
    return redirect(back)


@require_GET
@console_page
def held_list(request: ConsoleRequest) -> HttpResponse:
    page = Paginator(sel.memory_held(project_ids=project_ids(request)), 50).get_page(request.GET.get("page"))
    return render_page(request, "memory/held_list.html", {
        "page": page, "review_form": ReviewForm(),
        # A row's accept and reject are offered only in a project where the user curates (issue 17).
        "operator_projects": frozenset(role_project_ids(request.user, Role.OPERATOR, project_ids(request)))})


@require_POST
@console_page
@role_required(Role.OPERATOR)
def held_review(request: ConsoleRequest, record_id: int) -> HttpResponse:
    record = sel.memory_get(project_ids=project_ids(request), record_id=record_id)
    form = ReviewForm(request.POST)
    if form.is_valid():
        try:
            services.memory_review(
                project=record.project_id,
                actor=Actor.of(request.user),
                record_id=record.pk,
                approve=form.cleaned_data["decision"] == "accept",
                expected_version=form.cleaned_data["version"],
            )
            messages.success(request, f"Record {record.pk}: {form.cleaned_data['decision']}ed.")
        except DomainError as exc:
            messages.error(request, exc.detail)
    else:
        messages.error(request, "Choose accept or reject (from the list as it is now: reload it).")
    return redirect("memory:held_list")
