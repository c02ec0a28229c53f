"DIST_VERSION_HEX of the loaded library (0xMMmmpp)."
version() = ccall((:dist_version, libdistribute), UInt32, ())

"\"0.1.0\" of the loaded library."
version_string() = unsafe_string(ccall((:dist_version_string, libdistribute), Cstring, ()))

"The optional components built in, as a set of :ucx, :cuda, :nccl, :hwloc."
function build_features()
    bits = ccall((:dist_build_features, libdistribute), UInt32, ())
    names = (DIST_FEATURE_UCX => :ucx, DIST_FEATURE_CUDA => :cuda, DIST_FEATURE_NCCL => :nccl,
             DIST_FEATURE_HWLOC => :hwloc)
    Set(name for (bit, name) in names if bits & bit != 0)
end

"The build report as a JSON string."
function build_info()
    out = Ref{Ptr{UInt8}}(C_NULL)
    check(ccall((:dist_build_info, libdistribute), Int32, (Ptr{Ptr{UInt8}},), out))
    take_string(out[])
end

# A string the library handed over (`char**`): copied, then freed.
function take_string(p::Ptr{UInt8})
    try
        return p == C_NULL ? "" : unsafe_string(p)
    finally
        ccall((:dist_string_free, libdistribute), Cvoid, (Ptr{UInt8},), p)
    end
end

# A borrowed `const char*`: `nothing` for NULL.
borrowed(p::Ptr{UInt8}) = p == C_NULL ? nothing : unsafe_string(p)
