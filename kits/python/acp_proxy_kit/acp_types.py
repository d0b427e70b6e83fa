"""The ACP shapes the hooks see, as TypedDicts written from the ACP JSON schema (the messages a
proxy most often reads or changes). Types only: no behaviour, no validation."""

from __future__ import annotations

from typing import Any, Literal, TypedDict, Union

JsonObject = dict[str, Any]


class TextContent(TypedDict):
    type: Literal["text"]
    text: str


class ResourceLink(TypedDict):
    type: Literal["resource_link"]
    uri: str
    name: str


class TextResourceContents(TypedDict):
    uri: str
    text: str


class EmbeddedResource(TypedDict):
    type: Literal["resource"]
    resource: TextResourceContents


ContentBlock = Union[TextContent, ResourceLink, EmbeddedResource, JsonObject]


class PromptRequest(TypedDict):
    sessionId: str
    prompt: list[ContentBlock]


class SessionNotification(TypedDict):
    sessionId: str
    update: JsonObject


class RequestPermissionRequest(TypedDict):
    sessionId: str
    toolCall: JsonObject
    options: list[JsonObject]


class AvailableCommand(TypedDict):
    name: str
    description: str


class McpTool(TypedDict):
    """An MCP tool as `tools/list` describes it."""

    name: str
    description: str
    inputSchema: JsonObject
