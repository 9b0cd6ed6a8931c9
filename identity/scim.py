"""SCIM 2.0 (RFC 7643/7644) at /scim/v2: the company's directory makes, changes and removes people and groups.

The resources, their filters and PATCH operations are scim2-models'; this module is the HTTP side and the
mapping onto Django's User (userName, name, e-mails, active), `Identity` (id, externalId, what else the
directory sent) and `DirectoryGroup` (members, whose names HOOKBRIDGE_OIDC_ROLES maps to roles). Deactivating
(`active: false`) or deleting a person saves `is_active = False` through the model, so everything they hold ends
in every worker (tokens.signals and the receivers of core.signals.person_deactivated). Deleted people stay, as
deactivated accounts, for the history they made; their SCIM resource is gone (404).
"""

from __future__ import annotations

import hmac
import json
import logging
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from pydantic import ValidationError
from scim2_models import (
    AuthenticationScheme,
    Bulk,
    ChangePassword,
    Context,
    EnterpriseUser,
    ETag,
    Filter,
    Group,
    GroupMember,
    GroupMembership,
    Meta,
    Patch,
    PatchOp,
    ResourceType,
    ResponseParameters,
    SCIMException,
    ScimFilter,
    ScimPolicy,
    ScimProvider,
    ServiceProviderConfig,
    Sort,
    User,
)

from identity import roles
from identity.models import DirectoryGroup, Identity, ScimToken, new_person

logger = logging.getLogger(__name__)

ScimUser = User[EnterpriseUser]
PROVIDER = ScimProvider(
    models=[User, Group, EnterpriseUser],
    resource_types=[ResourceType.from_resource(ScimUser), ResourceType.from_resource(Group)],
)
# Entra ID removes a group's members with a value instead of a path filter (its docs; RFC 7644 3.5.2.2 says a
# filter): accepted, as it cannot be read as anything else.
POLICY = ScimPolicy(remove_value_as_filter=ScimPolicy.RemoveValue.apply)
MAX_RESULTS = 200
MAX_BODY = 1024 * 1024
CONTENT_TYPE = "application/scim+json"
# Kept from what the directory sent, but not ours to keep: the server says these.
NOT_KEPT = {"id", "meta", "groups", "password", "schemas"}


class ScimError(Exception):
    def __init__(self, status: int, detail: str, scim_type: str | None = None) -> None:
        super().__init__(detail)
        self.status, self.detail, self.scim_type = status, detail, scim_type


def _response(body: dict[str, Any], status: int = 200, location: str | None = None) -> HttpResponse:
    response = HttpResponse(json.dumps(body, default=str), status=status, content_type=CONTENT_TYPE)
    if location:
        response["Location"] = location
    return response


def _error(status: int, detail: str, scim_type: str | None = None) -> HttpResponse:
    body: dict[str, Any] = {
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:Error"],
        "status": str(status),
        "detail": detail,
    }
    if scim_type:
        body["scimType"] = scim_type
    response = _response(body, status)
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="scim"'
    return response


def _authorized(request: HttpRequest) -> bool:
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    given = given.strip()
    if scheme.lower() != "bearer" or not given:
        return False
    configured = settings.HOOKBRIDGE_SCIM_TOKEN
    if configured and hmac.compare_digest(given.encode(), configured.encode()):
        return True
    token = ScimToken.objects.matching(given)
    if token is None:
        return False
    ScimToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now())  # not a change worth an audit entry
    return True


@csrf_exempt
def endpoint(request: HttpRequest, path: str) -> HttpResponse:
    """Every /scim/v2 request: the bearer token first, then the resource the path names."""
    if not _authorized(request):
        return _error(401, "A SCIM bearer token is needed (HOOKBRIDGE_SCIM_TOKEN, or one made in the admin).")
    parts = [part for part in path.split("/") if part]
    try:
        handler, args = _route(request.method or "GET", parts)
        return handler(request, *args)
    except ScimError as error:
        return _error(error.status, error.detail, error.scim_type)
    except SCIMException as error:
        scim_error = error.to_error()
        return _error(int(scim_error.status or 400), str(scim_error.detail or error), scim_error.scim_type)
    except ValidationError as error:
        return _error(400, _validation_detail(error), "invalidValue")


def _validation_detail(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ()) if part is not None) or "the body"
    return f"{where}: {first.get('msg', 'invalid')}"


def _route(method: str, parts: list[str]) -> tuple[Callable[..., HttpResponse], tuple[Any, ...]]:
    if not parts:
        raise ScimError(404, "Nothing at /scim/v2 itself: see /scim/v2/ServiceProviderConfig.")
    head, rest = parts[0], parts[1:]
    read_only: dict[str, Callable[..., HttpResponse]] = {
        "ServiceProviderConfig": _config,
        "ResourceTypes": _resource_types,
        "Schemas": _schemas,
    }
    if head in read_only:
        if method != "GET":
            raise ScimError(405, f"{head} is read-only: GET it.")
        return read_only[head], tuple(rest[:1])
    kinds: dict[str, Any] = {"Users": USERS, "Groups": GROUPS}
    if head == ".search" and not rest:
        if method != "POST":
            raise ScimError(405, "/.search takes POST.")
        return _search_all, ()
    if head in kinds and rest == [".search"]:
        if method != "POST":
            raise ScimError(405, f"/{head}/.search takes POST.")
        return kinds[head].search, ()
    if head not in kinds or len(rest) > 1:
        raise ScimError(
            404, f"No SCIM endpoint /{'/'.join(parts)}: this server has Users, Groups and the discovery endpoints."
        )
    kind = kinds[head]
    if not rest:
        actions = {"GET": kind.search, "POST": kind.create}
        if method not in actions:
            raise ScimError(405, f"/{head} takes GET (search) and POST (create).")
        return actions[method], ()
    actions = {"GET": kind.read, "PUT": kind.replace, "PATCH": kind.patch, "DELETE": kind.delete}
    if method not in actions:
        raise ScimError(405, f"/{head}/ID takes GET, PUT, PATCH and DELETE.")
    return actions[method], (rest[0],)


def _base(request: HttpRequest) -> str:
    return request.build_absolute_uri("/scim/v2")


def _config(request: HttpRequest, *args: str) -> HttpResponse:
    config = ServiceProviderConfig(
        documentation_uri=None,
        patch=Patch(supported=True),
        bulk=Bulk(supported=False, max_operations=0, max_payload_size=0),
        filter=Filter(supported=True, max_results=MAX_RESULTS),
        change_password=ChangePassword(supported=False),
        sort=Sort(supported=False),
        etag=ETag(supported=False),
        authentication_schemes=[
            AuthenticationScheme(
                type=AuthenticationScheme.Type.oauthbearertoken,
                name="Bearer token",
                description="HOOKBRIDGE_SCIM_TOKEN, or a SCIM token made in the admin",
                primary=True,
            )
        ],
        meta=Meta(resource_type="ServiceProviderConfig", location=f"{_base(request)}/ServiceProviderConfig"),
    )
    return _response(config.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE))


def _list_response(total: int, start: int, items: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
        "totalResults": total,
        "startIndex": start,
        "itemsPerPage": len(items),
        "Resources": items,
    }


def _search_all(request: HttpRequest) -> HttpResponse:
    """POST /.search: Users and Groups together (an attribute one of them lacks matches none of its resources)."""
    query = _query(request)
    start, count = _paging(query)
    text = query.get("filter", "").strip()
    found = [(kind, row) for kind in (USERS, GROUPS) for row in kind.matching(request, text)]
    page = found[start - 1 : start - 1 + count]
    return _response(
        _list_response(
            len(found), start, [kind._dump(request, row, Context.SEARCH_RESPONSE, query) for kind, row in page]
        )
    )


def _discovery(request: HttpRequest, found: Iterable[Any], kind: str, wanted: str | None) -> HttpResponse:
    items = {}
    for item in found:
        item.meta = Meta(resource_type=kind, location=f"{_base(request)}/{kind}s/{item.id}")
        items[str(item.id)] = item.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE)
    if wanted is None:
        return _response(_list_response(len(items), 1, list(items.values())))
    if wanted not in items:
        raise ScimError(404, f"No {kind} '{wanted}' here: {', '.join(items)}.")
    return _response(items[wanted])


def _resource_types(request: HttpRequest, wanted: str | None = None) -> HttpResponse:
    return _discovery(request, [rt.model_copy() for rt in PROVIDER.resource_types], "ResourceType", wanted)


def _schemas(request: HttpRequest, wanted: str | None = None) -> HttpResponse:
    return _discovery(request, [schema.model_copy() for schema in PROVIDER.schemas], "Schema", wanted)


def _body(request: HttpRequest) -> dict[str, Any]:
    if len(request.body) > MAX_BODY:
        raise ScimError(413, f"The body is over {MAX_BODY // 1024} KiB.", "tooLarge")
    try:
        body = json.loads(request.body or b"{}")
    except ValueError as error:
        raise ScimError(400, f"The body is not JSON: {error}", "invalidSyntax") from error
    if not isinstance(body, dict):
        raise ScimError(400, "The body must be a JSON object.", "invalidSyntax")
    return body


def _query(request: HttpRequest) -> dict[str, str]:
    """A search's parameters: the query string's (GET), or a SearchRequest's body (POST .search)."""
    if request.method != "POST":
        return {key: str(value) for key, value in request.GET.items()}
    body = _body(request)
    query: dict[str, str] = {}
    for key in ("filter", "startIndex", "count", "sortBy", "sortOrder"):
        if body.get(key) is not None:
            query[key] = str(body[key])
    for key in ("attributes", "excludedAttributes"):
        value = body.get(key)
        if value is not None:
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                raise ScimError(400, f"{key}: a list of attribute names.", "invalidValue")
            query[key] = ",".join(value)
    return query


def _paging(query: dict[str, str]) -> tuple[int, int]:
    try:
        start = max(1, int(query.get("startIndex", "1")))
        count = max(0, min(MAX_RESULTS, int(query.get("count", str(MAX_RESULTS)))))
    except ValueError as error:
        raise ScimError(400, "startIndex and count must be whole numbers.", "invalidValue") from error
    return start, count


def _parameters(query: dict[str, str], model: Any) -> ResponseParameters[Any] | None:
    attributes = [a.strip() for a in query.get("attributes", "").split(",") if a.strip()]
    excluded = [a.strip() for a in query.get("excludedAttributes", "").split(",") if a.strip()]
    if not attributes and not excluded:
        return None
    parameters: ResponseParameters[Any] = ResponseParameters[model].model_validate(
        {"attributes": attributes or None, "excludedAttributes": excluded or None}
    )
    return parameters


class Kind:
    """One resource type's endpoints: Users and Groups differ only in how a resource maps onto our rows."""

    name = ""
    model: Any = None
    filter_type: Any = None
    patch_type: Any = None
    # The attribute whose `eq` filter is answered by one indexed query, not by reading every resource.
    indexed = ""

    def rows(self) -> Any:
        raise NotImplementedError

    def row(self, scim_id: str) -> Any:
        parsed = _uuid(scim_id)
        found = self.rows().filter(scim_id=parsed).first() if parsed else None
        if found is None:
            raise ScimError(404, f"No {self.name} with id '{scim_id}'.")
        return found

    def resource(self, request: HttpRequest, row: Any) -> Any:
        raise NotImplementedError

    def indexed_rows(self, value: str) -> Any:
        raise NotImplementedError

    def write(self, row: Any, resource: Any, *, creating: bool) -> Any:
        raise NotImplementedError

    def location(self, request: HttpRequest, row: Any) -> str:
        return f"{_base(request)}/{self.name}s/{row.scim_id}"

    def _dump(
        self, request: HttpRequest, row: Any, context: Context, query: dict[str, str] | None = None
    ) -> dict[str, Any]:
        parameters = _parameters(query if query is not None else _query(request), self.model)
        dumped: dict[str, Any] = self.resource(request, row).model_dump(
            scim_ctx=context, response_parameters=parameters
        )
        return dumped

    def search(self, request: HttpRequest) -> HttpResponse:
        query = _query(request)
        start, count = _paging(query)
        matched = self.matching(request, query.get("filter", "").strip())
        page = matched[start - 1 : start - 1 + count]
        return _response(
            _list_response(
                len(matched), start, [self._dump(request, row, Context.SEARCH_RESPONSE, query) for row in page]
            )
        )

    def matching(self, request: HttpRequest, text: str) -> list[Any]:
        rows = self.rows()
        matched: list[Any]
        if not text:
            matched = list(rows)
        else:
            try:
                condition = self.filter_type(text)
            except SCIMException as error:
                raise ScimError(400, f"filter: {error}", "invalidFilter") from error
            except (ValueError, ValidationError) as error:
                raise ScimError(400, f"filter: {error}", "invalidFilter") from error
            quick = self._quick(text)
            if quick is not None:
                rows = self.indexed_rows(quick)
            matched = [row for row in rows if condition.match(self.resource(request, row))]
        return matched

    def _quick(self, text: str) -> str | None:
        """`<indexed> eq "value"` alone: the value, so one query finds the candidates (the match still decides)."""
        attribute, _, rest = text.partition(" ")
        operator, _, value = rest.strip().partition(" ")
        value = value.strip()
        simple = value.startswith('"') and value.endswith('"') and value.count('"') == 2 and " and " not in text.lower()
        if attribute.lower() == self.indexed.lower() and operator.lower() == "eq" and simple:
            return value[1:-1]
        return None

    def read(self, request: HttpRequest, scim_id: str) -> HttpResponse:
        return _response(self._dump(request, self.row(scim_id), Context.RESOURCE_QUERY_RESPONSE))

    def _validated(self, body: dict[str, Any], context: Context) -> Any:
        return self.model.model_validate(_known_schemas(body), scim_ctx=context, scim_policy=POLICY)

    def create(self, request: HttpRequest) -> HttpResponse:
        resource = self._validated(_body(request), Context.RESOURCE_CREATION_REQUEST)
        row = self.write(None, resource, creating=True)
        dumped = self._dump(request, row, Context.RESOURCE_CREATION_RESPONSE)
        return _response(dumped, 201, location=self.location(request, row))

    def replace(self, request: HttpRequest, scim_id: str) -> HttpResponse:
        row = self.row(scim_id)
        resource = self._validated(_body(request), Context.RESOURCE_REPLACEMENT_REQUEST)
        if resource.id is not None and str(resource.id) != str(row.scim_id):
            raise ScimError(400, f"id: the body names '{resource.id}', the address '{scim_id}'.", "mutability")
        row = self.write(row, resource, creating=False)
        return _response(self._dump(request, row, Context.RESOURCE_REPLACEMENT_RESPONSE))

    def patch(self, request: HttpRequest, scim_id: str) -> HttpResponse:
        row = self.row(scim_id)
        operations = self.patch_type.model_validate(
            _without_nulls(_body(request)), scim_ctx=Context.RESOURCE_PATCH_REQUEST, scim_policy=POLICY
        )
        resource = self.resource(request, row)
        if operations.patch(resource, scim_policy=POLICY):
            row = self.write(row, resource, creating=False)
        return _response(self._dump(request, row, Context.RESOURCE_PATCH_RESPONSE))

    def delete(self, request: HttpRequest, scim_id: str) -> HttpResponse:
        self.remove(self.row(scim_id))
        return HttpResponse(status=204)

    def remove(self, row: Any) -> None:
        raise NotImplementedError


def _without_nulls(body: dict[str, Any]) -> dict[str, Any]:
    """Entra ID sends `"$ref": null` beside each member it removes by value: a null names nothing to match."""
    operations = body.get("Operations")
    if not isinstance(operations, list):
        return body
    for operation in operations:
        value = operation.get("value") if isinstance(operation, dict) else None
        if isinstance(value, list):
            operation["value"] = [
                {k: v for k, v in item.items() if v is not None} if isinstance(item, dict) else item for item in value
            ]
    return body


KNOWN_SCHEMAS = {str(schema.id) for schema in PROVIDER.schemas}


def _known_schemas(body: dict[str, Any]) -> dict[str, Any]:
    """Entra ID names its own ADSCIM schema on a group without sending any attribute of it: that name is dropped.
    A schema whose attributes are in the body is kept, and refused as unknown if it is."""
    schemas = body.get("schemas")
    if not isinstance(schemas, list):
        return body
    kept = [urn for urn in schemas if urn in KNOWN_SCHEMAS or urn in body]
    return {**body, "schemas": kept} if kept != schemas else body


def _kept(resource: Any) -> dict[str, Any]:
    """What the directory sent that we do not map onto a column, to give back as it was sent."""
    dumped = resource.model_dump(scim_ctx=Context.RESOURCE_REPLACEMENT_REQUEST)
    return {key: value for key, value in dumped.items() if key not in NOT_KEPT}


class Users(Kind):
    name = "User"
    model = ScimUser
    filter_type = ScimFilter[ScimUser]
    patch_type = PatchOp[ScimUser]
    indexed = "userName"

    def rows(self) -> Any:
        live = Identity.objects.filter(removed_at__isnull=True, provisioned=True)
        return live.select_related("user").prefetch_related("user__directory_groups").order_by("pk")

    def indexed_rows(self, value: str) -> Any:
        return self.rows().filter(user__username__iexact=value)

    def resource(self, request: HttpRequest, identity: Identity) -> Any:
        person = identity.user
        kept = dict(identity.scim_resource or {})
        kept["userName"] = person.get_username()
        if "active" in kept or not person.is_active:  # deactivated here (the admin) shows so; unsaid stays unsaid
            kept["active"] = person.is_active
        if identity.external_id:
            kept["externalId"] = identity.external_id
        name = dict(kept.get("name") or {})
        for key, value in (("givenName", person.first_name), ("familyName", person.last_name)):
            if value:
                name[key] = value
        if name:
            kept["name"] = name
        emails = [dict(e) for e in kept.get("emails") or []]
        if person.email and not any(str(e.get("value", "")).lower() == person.email.lower() for e in emails):
            # Changed here (the admin, a sign-in): the address people are reached at comes first.
            for other in emails:
                other.pop("primary", None)
            emails.insert(0, {"value": person.email, "primary": True})
        if emails:
            kept["emails"] = emails
        resource = self.model.model_validate(kept, scim_policy=ScimPolicy(unknown=ScimPolicy.Unknown.ignore))
        resource.id = str(identity.scim_id)
        resource.groups = [
            GroupMembership.model_validate(
                {
                    "value": str(group.scim_id),
                    "display": group.display_name,
                    "$ref": f"{_base(request)}/Groups/{group.scim_id}",
                    "type": "direct",
                }
            )
            for group in person.directory_groups.all()
        ] or None
        resource.meta = Meta(
            resource_type="User",
            created=identity.created_at,
            last_modified=identity.updated_at,
            location=self.location(request, identity),
        )
        return resource

    def write(self, identity: Identity | None, resource: Any, *, creating: bool) -> Identity:
        username = str(resource.user_name or "").strip()
        if not username:
            raise ScimError(400, "userName: required.", "invalidValue")
        if len(username) > 150:
            raise ScimError(400, "userName: 150 characters at most.", "invalidValue")
        emails = list(resource.emails or [])
        primary = next((e for e in emails if e.primary), emails[0] if emails else None)
        name = resource.name
        fields = {
            "email": str(primary.value or "") if primary else "",
            "first_name": str((name.given_name if name else "") or "")[:150],
            "last_name": str((name.family_name if name else "") or "")[:150],
            "is_active": resource.active is not False,
        }
        # Atomic: the person, their identity and (on deactivation) everything they held change together.
        with transaction.atomic():
            taken = get_user_model().objects.filter(username__iexact=username)
            if identity is not None:
                taken = taken.exclude(pk=identity.user_id)
            clash = taken.select_related("identity").first()
            if clash is not None:
                former = getattr(clash, "identity", None)
                if not (creating and former is not None and former.removed_at is not None):
                    raise ScimError(409, f"userName: '{username}' is taken on this server.", "uniqueness")
                identity = former  # someone the directory deleted comes back: the same person, a new SCIM id
                identity.scim_id = uuid.uuid4()
                identity.removed_at = None
            if identity is None:
                person = new_person(username, **fields)
                identity = Identity(user=person, provisioned=True)
            else:
                person = identity.user
                person.username = username
                for key, value in fields.items():
                    setattr(person, key, value)
                person.save()
            identity.provisioned = True
            identity.external_id = str(resource.external_id or "")[:255]
            identity.display_name = str(resource.display_name or "")[:255]
            identity.scim_resource = _kept(resource)
            identity.save()
        return identity

    def remove(self, identity: Identity) -> None:
        # Atomic: out of every group (so out of every project the groups gave) and deactivated, as one change.
        with transaction.atomic():
            person = identity.user
            for group in person.directory_groups.all():
                group.set_members([p for p in group.members.all() if p.pk != person.pk])
            person.is_active = False
            person.save()
            identity.removed_at = timezone.now()
            identity.save()


class Groups(Kind):
    name = "Group"
    model = Group
    filter_type = ScimFilter[Group]
    patch_type = PatchOp[Group]
    indexed = "displayName"

    def rows(self) -> Any:
        return DirectoryGroup.objects.prefetch_related("members__identity").order_by("pk")

    def indexed_rows(self, value: str) -> Any:
        return self.rows().filter(display_name__iexact=value)

    def resource(self, request: HttpRequest, group: DirectoryGroup) -> Any:
        members = []
        for person in group.members.all():
            identity = getattr(person, "identity", None)
            if identity is None or identity.removed_at is not None:
                continue
            members.append(
                GroupMember.model_validate(
                    {
                        "value": str(identity.scim_id),
                        "display": group.member_display.get(str(identity.scim_id)) or person.get_username(),
                        "type": "User",
                        "$ref": f"{_base(request)}/Users/{identity.scim_id}",
                    }
                )
            )
        return Group(
            id=str(group.scim_id),
            display_name=group.display_name,
            external_id=group.external_id or None,
            members=members or None,
            meta=Meta(
                resource_type="Group",
                created=group.created_at,
                last_modified=group.updated_at,
                location=self.location(request, group),
            ),
        )

    def write(self, group: DirectoryGroup | None, resource: Any, *, creating: bool) -> DirectoryGroup:
        name = str(resource.display_name or "").strip()
        if not name:
            raise ScimError(400, "displayName: required.", "invalidValue")
        given = [str(member.value) for member in resource.members or [] if member.value]
        ids = {value: _uuid(value) for value in given}
        live = Identity.objects.filter(scim_id__in=[i for i in ids.values() if i], removed_at__isnull=True)
        people = {identity.scim_id: identity.user for identity in live.select_related("user")}
        unknown = [value for value, parsed in ids.items() if parsed not in people]
        if unknown:
            raise ScimError(400, f"members: no User with id {', '.join(repr(v) for v in unknown[:5])}.", "invalidValue")
        # Atomic: the group, its members and the roles they give change together.
        with transaction.atomic():
            clash = DirectoryGroup.objects.filter(display_name__iexact=name)
            if group is not None:
                clash = clash.exclude(pk=group.pk)
            if clash.exists():
                raise ScimError(409, f"displayName: a group '{name}' exists already.", "uniqueness")
            if group is None:
                group = DirectoryGroup(display_name=name)
            renamed = group.pk is not None and group.display_name != name
            group.display_name = name[:255]
            group.external_id = str(resource.external_id or "")[:255]
            group.member_display = {
                str(ids[str(m.value)]): str(m.display)[:255] for m in resource.members or [] if m.value and m.display
            }
            group.save()
            group.set_members(list(people.values()))
            if renamed:  # its old name's roles go, its new name's come
                for person in group.members.all():
                    roles.apply(person)
        return group

    def remove(self, group: DirectoryGroup) -> None:
        group.delete()


def _uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


USERS = Users()
GROUPS = Groups()
