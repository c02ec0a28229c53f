"bfloat16, kept as its bits (the upper half of a Float32)."
struct BF16
    bits::UInt16
end
BF16(x::Float32) = BF16(UInt16(reinterpret(UInt32, x) >> 16))
Base.Float32(x::BF16) = reinterpret(Float32, UInt32(x.bits) << 16)

"The element types a buffer may hold, and their DIST_DTYPE."
dtype(::Type{Int8}) = Int32(0)
dtype(::Type{UInt8}) = Int32(1)
dtype(::Type{Int32}) = Int32(2)
dtype(::Type{UInt32}) = Int32(3)
dtype(::Type{Int64}) = Int32(4)
dtype(::Type{UInt64}) = Int32(5)
dtype(::Type{Float16}) = Int32(6)
dtype(::Type{BF16}) = Int32(7)
dtype(::Type{Float32}) = Int32(8)
dtype(::Type{Float64}) = Int32(9)
dtype(::Type{T}) where {T} = throw(ArgumentError("$T has no libdistribute dtype"))

const Element = Union{Int8, UInt8, Int32, UInt32, Int64, UInt64, Float16, BF16, Float32, Float64}

"dist_buffer_t."
struct DistBuffer
    data::Ptr{Cvoid}
    count::UInt64
    dtype::Int32
    memory_kind::Int32
    stream::Ptr{Cvoid}
end

# A descriptor of a dense array's memory (no copy); the caller keeps `a` rooted
# (GC.@preserve or a Request) while C may use it.
describe(a::Array{T}, count::Integer = length(a)) where {T} =
    DistBuffer(Ptr{Cvoid}(pointer(a)), UInt64(count), dtype(T), DIST_MEMORY_HOST, C_NULL)
describe(::Nothing, count::Integer = 0) = nothing

const ELEMENT_TYPES = Dict(dtype(T) => T for T in (Int8, UInt8, Int32, UInt32, Int64, UInt64, Float16, BF16,
                                                   Float32, Float64))
"The Julia element type of a DIST_DTYPE value."
element_type(d::Integer) = ELEMENT_TYPES[Int32(d)]
