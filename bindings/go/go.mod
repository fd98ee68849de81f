module sds-bpf/bindings/go

go 1.18
