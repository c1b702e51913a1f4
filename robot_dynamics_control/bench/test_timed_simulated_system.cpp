// The control-loop bench's hardware, TimedSimulatedSystem: SimulatedSystem with every cycle's read
// and write times logged (the last timing_log_cycles of them), the log written at deactivation and
// at destruction, read()/write() without allocation, an unwritable log refused at init.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "simulated_system_harness.hpp"
#include "timed_simulated_system.hpp"

namespace
{
using robot_dynamics_control::bench::CycleLog;
using robot_dynamics_control::bench::TimedSimulatedSystem;
// the harness (Sim, puma_with_block, param, info_of, allocations_in_cycles, ...) and the test files
using namespace robot_dynamics_control::test;  // NOLINT(build/namespaces)

const std::vector<double> kQ0 = {0.1, -0.4, 0.3, 0.2, -0.5, 0.6};

std::string drive() { return robot_file("config/puma560_drivetrain.yaml"); }

std::unique_ptr<robot_dynamics_control::SimulatedSystem> timed() { return std::make_unique<TimedSimulatedSystem>(); }

const CycleLog & log_of(const Sim & sim) { return static_cast<const TimedSimulatedSystem &>(*sim.hw).cycle_log(); }

TEST(TimedSimulatedSystem, ReadAndWriteAllocateNothing)
{
  const std::string log = (std::filesystem::temp_directory_path() / "rdc-sim-alloc.csv").string();
  Sim sim(puma_with_block(param("drivetrain", drive()) + param("timing_log", log) + param("timing_log_cycles", "64"), kQ0),
          timed());
  sim.command = {1.0, 2.0, 3.0, 0.1, 0.2, 0.3};
  sim.cycle();
  EXPECT_EQ(allocations_in_cycles(sim, 200), 0);  // past the log's capacity: it wraps
  sim.hw.reset();  // the destructor writes the log
  std::filesystem::remove(log);
}

TEST(TimedSimulatedSystem, TimingLogRecordsEveryCycleAndIsWrittenAtDeactivation)
{
  const std::string log = (std::filesystem::temp_directory_path() / "rdc-sim-timing.csv").string();
  std::filesystem::remove(log);
  Sim sim(puma_with_block(param("timing_log", log) + param("timing_log_cycles", "30"), kQ0), timed());
  for (int k = 0; k < 40; ++k) {
    sim.command = {0.01 * k, kNaN, 0.0, 0.0, 0.0, 0.0};
    sim.cycle();
  }
  EXPECT_EQ(log_of(sim).cycles(), 40u);
  EXPECT_EQ(log_of(sim).size(), 30u);
  sim.hw->on_deactivate(rclcpp_lifecycle::State());
  std::ifstream f(log);
  std::string line;
  std::getline(f, line);
  EXPECT_EQ(line, "cycle,read_steady_ns,write_steady_ns,ros_time_ns,effort_joint1,effort_joint2,effort_joint3,"
                  "effort_joint4,effort_joint5,effort_joint6");
  long long previous_read = 0;
  int rows = 0;
  for (; std::getline(f, line); ++rows) {
    std::vector<std::string> cells;
    std::stringstream in(line);
    for (std::string c; std::getline(in, c, ',');) cells.push_back(c);
    ASSERT_EQ(cells.size(), 10u) << line;
    const int cycle = std::stoi(cells[0]);
    EXPECT_EQ(cycle, 10 + rows);  // the last 30 of 40, oldest first
    const long long read = std::stoll(cells[1]), write = std::stoll(cells[2]), ros = std::stoll(cells[3]);
    EXPECT_GE(write, read);
    EXPECT_GT(read, previous_read);
    previous_read = read;
    EXPECT_EQ(ros, 2000000LL * (cycle + 1));  // the ROS time given to read()
    EXPECT_EQ(std::stod(cells[4]), 0.01 * cycle);  // the effort commanded at write()
    EXPECT_TRUE(std::isnan(std::stod(cells[5])));
  }
  EXPECT_EQ(rows, 30);
  EXPECT_FALSE(std::filesystem::exists(log + ".tmp." + std::to_string(::getpid())));
  std::filesystem::remove(log);
}

TEST(TimedSimulatedSystem, AnUnwritableLogOrABadCapacityFailsAtInit)
{
  for (const auto & p : {param("timing_log", "/nonexistent/dir/log.csv"), param("timing_log_cycles", "0"),
                         param("timing_log_cycles", "2.5"), param("substeps", "0")}) {
    TimedSimulatedSystem hw;
    EXPECT_EQ(hw.on_init(info_of(puma_with_block(p, kQ0))), CallbackReturn::ERROR) << p;
  }
}

}  // namespace
