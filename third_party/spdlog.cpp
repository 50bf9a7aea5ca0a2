// spdlog's implementation, compiled once (CMakeLists.txt says why): with SPDLOG_COMPILED_LIB its
// headers leave out their -inl.h halves, which are compiled here, with the class templates of
// the sinks the project uses instantiated for the mutexes it uses.
#ifndef SPDLOG_COMPILED_LIB
#error "spdlog.cpp is built with SPDLOG_COMPILED_LIB (third_party/CMakeLists.txt)"
#endif

#include <spdlog/common-inl.h>
#include <spdlog/details/backtracer-inl.h>
#include <spdlog/details/log_msg-inl.h>
#include <spdlog/details/log_msg_buffer-inl.h>
#include <spdlog/details/os-inl.h>
#include <spdlog/details/periodic_worker-inl.h>
#include <spdlog/details/registry-inl.h>
#include <spdlog/logger-inl.h>
#include <spdlog/pattern_formatter-inl.h>
#include <spdlog/sinks/ansicolor_sink-inl.h>
#include <spdlog/sinks/base_sink-inl.h>
#include <spdlog/sinks/sink-inl.h>
#include <spdlog/sinks/stdout_color_sinks-inl.h>
#include <spdlog/sinks/stdout_sinks-inl.h>
#include <spdlog/spdlog-inl.h>

#include <spdlog/details/null_mutex.h>
#include <mutex>

template class SPDLOG_API spdlog::sinks::base_sink<std::mutex>;
template class SPDLOG_API spdlog::sinks::base_sink<spdlog::details::null_mutex>;
template class SPDLOG_API spdlog::sinks::stdout_sink_base<spdlog::details::console_mutex>;
template class SPDLOG_API spdlog::sinks::stdout_sink_base<spdlog::details::console_nullmutex>;
template class SPDLOG_API spdlog::sinks::stdout_sink<spdlog::details::console_mutex>;
template class SPDLOG_API spdlog::sinks::stderr_sink<spdlog::details::console_mutex>;
template class SPDLOG_API spdlog::sinks::stdout_sink<spdlog::details::console_nullmutex>;
template class SPDLOG_API spdlog::sinks::stderr_sink<spdlog::details::console_nullmutex>;
// The default logger's sink, and the colour sinks a host may ask for.
template class SPDLOG_API spdlog::sinks::ansicolor_sink<spdlog::details::console_mutex>;
template class SPDLOG_API spdlog::sinks::ansicolor_sink<spdlog::details::console_nullmutex>;
template class SPDLOG_API spdlog::sinks::ansicolor_stdout_sink<spdlog::details::console_mutex>;
template class SPDLOG_API spdlog::sinks::ansicolor_stdout_sink<spdlog::details::console_nullmutex>;
template class SPDLOG_API spdlog::sinks::ansicolor_stderr_sink<spdlog::details::console_mutex>;
template class SPDLOG_API spdlog::sinks::ansicolor_stderr_sink<spdlog::details::console_nullmutex>;

namespace spdlog {
template SPDLOG_API std::shared_ptr<logger> stdout_color_mt<synchronous_factory>(const std::string&,
                                                                                 color_mode);
template SPDLOG_API std::shared_ptr<logger> stdout_color_st<synchronous_factory>(const std::string&,
                                                                                 color_mode);
template SPDLOG_API std::shared_ptr<logger> stderr_color_mt<synchronous_factory>(const std::string&,
                                                                                 color_mode);
template SPDLOG_API std::shared_ptr<logger> stderr_color_st<synchronous_factory>(const std::string&,
                                                                                 color_mode);
template SPDLOG_API std::shared_ptr<logger> stdout_logger_mt<synchronous_factory>(
    const std::string&);
template SPDLOG_API std::shared_ptr<logger> stdout_logger_st<synchronous_factory>(
    const std::string&);
template SPDLOG_API std::shared_ptr<logger> stderr_logger_mt<synchronous_factory>(
    const std::string&);
template SPDLOG_API std::shared_ptr<logger> stderr_logger_st<synchronous_factory>(
    const std::string&);
}  // namespace spdlog
