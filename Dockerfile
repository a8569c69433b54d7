# syntax=docker/dockerfile:1
# The servicewatch manager: a static Go binary on distroless, run as non-root.
#   make docker-build IMG=registry.example.com/servicewatch:v0.1.0

FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS
ARG TARGETARCH
WORKDIR /src
# Modules first, so that a change to the code does not download them again.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY internal/ internal/
# CGO off: a static binary that needs no libc in the final image.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} GOTOOLCHAIN=local \
    go build -trimpath -ldflags="-s -w" -o /out/manager ./cmd/manager

# distroless/static has CA certificates and tzdata, nothing else: no shell, no
# package manager. The nonroot tag runs as UID 65532, matching the Deployment.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]
